// libsecp256k1 through the secp256k1 package's native binding: shared by every key store, in @wcs/core.
export { nativeSecp256k1, nativeSecpError, SECP256K1_BACKEND } from '@wcs/core';
