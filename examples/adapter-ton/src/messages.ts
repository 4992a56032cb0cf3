import { Address, beginCell, type Cell, type Slice } from '@ton/core';

/** TEP-74 jetton operations. */
export const OP_COMMENT = 0;
export const OP_JETTON_TRANSFER = 0x0f8a7ea5;
export const OP_JETTON_INTERNAL_TRANSFER = 0x178d4519;
export const OP_JETTON_NOTIFICATION = 0x7362d09c;
export const OP_JETTON_EXCESSES = 0xd53276db;

/** A text comment: op 0, then the UTF-8 text (snake cells when longer than one). */
export function commentCell(text: string): Cell {
  return beginCell().storeUint(OP_COMMENT, 32).storeStringTail(text).endCell();
}

/** The text of a comment body (op 0), or null when the body is something else or not UTF-8 text. */
export function readComment(body: Slice): string | null {
  try {
    if (body.remainingBits < 32) return null;
    if (body.loadUint(32) !== OP_COMMENT) return null;
    const text = body.loadStringTail();
    // a replacement character means the bytes were not valid UTF-8: not a comment a user typed
    if (text.includes('\ufffd')) return null;
    return text;
  } catch {
    return null;
  }
}

/** A deposit memo from a comment: the text without surrounding white space, null when empty. */
export function memoOfComment(text: string | null): string | null {
  if (text === null) return null;
  const t = text.trim();
  return t.length > 0 ? t : null;
}

export interface JettonNotification {
  readonly queryId: bigint;
  readonly amount: bigint;
  /** The jetton sender's owner address (who sent the jettons). */
  readonly sender: Address | null;
  /** The forward payload's comment, if it is one. */
  readonly comment: string | null;
}

/** transfer_notification#7362d09c query_id:uint64 amount:Coins sender:MsgAddress forward_payload:(Either Cell ^Cell). */
export function readJettonNotification(body: Slice): JettonNotification | null {
  try {
    if (body.remainingBits < 32 || body.loadUint(32) !== OP_JETTON_NOTIFICATION) return null;
    const queryId = body.loadUintBig(64);
    const amount = body.loadCoins();
    const sender = body.loadMaybeAddress();
    let comment: string | null = null;
    if (body.remainingBits > 0) {
      const payload = body.loadBit() ? body.loadRef().beginParse() : body;
      comment = readComment(payload);
    }
    return { queryId, amount, sender, comment };
  } catch {
    return null;
  }
}

/**
 * transfer#0f8a7ea5 query_id:uint64 amount:Coins destination:MsgAddress response_destination:MsgAddress
 * custom_payload:(Maybe ^Cell) forward_ton_amount:Coins forward_payload:(Either Cell ^Cell)
 */
export function jettonTransferBody(args: { queryId: bigint; amount: bigint; destination: Address; responseDestination: Address; forwardTonAmount: bigint; comment: string | null }): Cell {
  const b = beginCell()
    .storeUint(OP_JETTON_TRANSFER, 32)
    .storeUint(args.queryId, 64)
    .storeCoins(args.amount)
    .storeAddress(args.destination)
    .storeAddress(args.responseDestination)
    .storeBit(false)
    .storeCoins(args.forwardTonAmount);
  if (args.comment === null) b.storeBit(false);
  else b.storeBit(true).storeRef(commentCell(args.comment));
  return b.endCell();
}
