import { createHash } from 'node:crypto';
import * as pkcs11js from 'pkcs11js';
import { KeyStoreError, secp256k1Uncompressed, type Curve, type KeyRef } from '@wcs/core';
import { EC_PARAMS, MECHANISMS } from './constants';
import type { Handle } from './connection';

/** A key's identity on the token: CKA_LABEL (readable) and CKA_ID = SHA-256(label). */
export interface KeyIdentity {
  readonly label: string;
  readonly id: Buffer;
}

/**
 * The label `<domain>:<namespace>:<purpose>:<applicationId>:<index>` and CKA_ID = its SHA-256.
 * Deterministic, so a key generated just before a crash (before the directory row was written)
 * is found again and adopted, never duplicated. The curve is not part of it, so a ref asking
 * for another curve than its key's is noticed.
 */
export function keyIdentity(domain: string, ref: KeyRef): KeyIdentity {
  const label = `${domain}:${ref.spec.namespace}:${ref.purpose}:${ref.applicationId}:${ref.index}`;
  return { label, id: createHash('sha256').update(label, 'utf8').digest() };
}

/** Object handles of one class with this CKA_ID (at most `max`). */
export function findObjects(p: pkcs11js.PKCS11, session: Handle, id: Buffer, objectClass: number, max = 2): Handle[] {
  p.C_FindObjectsInit(session, [
    { type: pkcs11js.CKA_CLASS, value: objectClass },
    { type: pkcs11js.CKA_ID, value: id },
  ]);
  try {
    return p.C_FindObjects(session, max);
  } finally {
    p.C_FindObjectsFinal(session);
  }
}

/** The curve of an EC / EC-Edwards key object, from CKA_KEY_TYPE (and CKA_EC_PARAMS for EC). */
export function curveOf(p: pkcs11js.PKCS11, session: Handle, handle: Handle): Curve | string {
  const [type, params] = p.C_GetAttributeValue(session, handle, [{ type: pkcs11js.CKA_KEY_TYPE }, { type: pkcs11js.CKA_EC_PARAMS }]);
  const keyType = (type!.value as Buffer).readUInt32LE(0);
  const ecParams = params!.value as Buffer;
  if (keyType === MECHANISMS.ed25519.keyType) return 'ed25519';
  if (keyType === MECHANISMS.secp256k1.keyType) return ecParams.equals(EC_PARAMS.secp256k1) ? 'secp256k1' : `EC ${ecParams.toString('hex')}`;
  return `key type 0x${keyType.toString(16)}`;
}

/** CKA_EC_POINT is a DER OCTET STRING around the point (some modules give the raw point). */
function unwrapPoint(raw: Buffer, size: number): Buffer {
  if (raw.length === size) return raw;
  if (raw[0] === 0x04 && raw[1] === size && raw.length === size + 2) return raw.subarray(2);
  if (raw[0] === 0x04 && raw[1] === 0x81 && raw[2] === size && raw.length === size + 3) return raw.subarray(3);
  throw new KeyStoreError('KEY_NOT_FOUND', `the token returned a malformed CKA_EC_POINT (${raw.length} bytes)`);
}

/** The public key of a public-key object: secp256k1 33-byte compressed (+65-byte uncompressed), ed25519 32 bytes. */
export function readPublicKey(p: pkcs11js.PKCS11, session: Handle, handle: Handle, curve: Curve): { bytes: Uint8Array; uncompressed?: Uint8Array } {
  const [attr] = p.C_GetAttributeValue(session, handle, [{ type: pkcs11js.CKA_EC_POINT }]);
  const raw = attr!.value as Buffer;
  if (curve === 'ed25519') return { bytes: new Uint8Array(unwrapPoint(raw, 32)) };
  const point = unwrapPoint(raw, 65);
  const uncompressed = secp256k1Uncompressed(new Uint8Array(point));
  const bytes = new Uint8Array(33);
  bytes[0] = (uncompressed[64]! & 1) === 1 ? 0x03 : 0x02;
  bytes.set(uncompressed.subarray(1, 33), 1);
  return { bytes, uncompressed: new Uint8Array(uncompressed) };
}

/**
 * Generates a key pair inside the token: token objects, the private half CKA_SENSITIVE, not
 * extractable, CKA_PRIVATE, sign-only; the public half readable, verify-only. Returns the handles.
 */
export async function generateKeyPair(p: pkcs11js.PKCS11, session: Handle, curve: Curve, identity: KeyIdentity): Promise<pkcs11js.KeyPair> {
  const m = MECHANISMS[curve];
  const common = [
    { type: pkcs11js.CKA_TOKEN, value: true },
    { type: pkcs11js.CKA_ID, value: identity.id },
    { type: pkcs11js.CKA_LABEL, value: identity.label },
    { type: pkcs11js.CKA_KEY_TYPE, value: m.keyType },
  ];
  const publicTemplate = [
    ...common,
    { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PUBLIC_KEY },
    { type: pkcs11js.CKA_PRIVATE, value: false },
    { type: pkcs11js.CKA_VERIFY, value: true },
    { type: pkcs11js.CKA_EC_PARAMS, value: EC_PARAMS[curve] },
  ];
  const privateTemplate = [
    ...common,
    { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY },
    { type: pkcs11js.CKA_PRIVATE, value: true },
    { type: pkcs11js.CKA_SENSITIVE, value: true },
    { type: pkcs11js.CKA_EXTRACTABLE, value: false },
    { type: pkcs11js.CKA_SIGN, value: true },
    { type: pkcs11js.CKA_DECRYPT, value: false },
    { type: pkcs11js.CKA_DERIVE, value: false },
  ];
  return p.C_GenerateKeyPairAsync(session, { mechanism: m.generate }, publicTemplate, privateTemplate);
}
