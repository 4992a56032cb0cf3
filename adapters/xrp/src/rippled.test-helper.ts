import { decode, hashes } from 'xrpl';

/** Test support for replaying recorded rippled answers (src/fixtures, SOURCE.md). */
export type Json = Record<string, unknown>;

/** A WebSocket response as the JSON-RPC API carries it: the same result, status inside it. */
export function asJsonRpc(ws: Json): Json {
  return { result: { ...(ws.result as Json), status: ws.status } };
}

/**
 * A recorded submit answer as rippled gives it for the blob actually sent: tx_blob and
 * tx_json (with its hash) replaced by the submitted transaction's; the engine result and the
 * rest as recorded.
 */
export function submitAnswerFor(recordedAnswer: Json, blob: string): Json {
  return { ...recordedAnswer, result: { ...(recordedAnswer.result as Json), tx_blob: blob, tx_json: { ...decode(blob), hash: hashes.hashSignedTx(blob) } } };
}

/** A recorded validated `tx` answer (API v2) for the submitted transaction: tx_json and hash replaced; meta, ledger and validation as recorded. */
export function txAnswerFor(recordedAnswer: Json, blob: string): Json {
  return { result: { ...(recordedAnswer.result as Json), tx_json: decode(blob), hash: hashes.hashSignedTx(blob) } };
}
