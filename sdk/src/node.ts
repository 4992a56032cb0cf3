/**
 * The Node entry point (the package's `node` export condition): node:crypto for hashing, HMAC and
 * the constant-time compare, imported statically; everything else is the universal entry point.
 */
import * as nodeCrypto from 'node:crypto';
import { registerNodeCrypto, type NodeCryptoLike } from './crypto.js';

registerNodeCrypto(nodeCrypto as unknown as NodeCryptoLike);

export * from './index.js';
