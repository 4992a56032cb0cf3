// The key-store error is shared by every backend: it lives in @wcs/core.
export { KeyStoreError, type KeyStoreErrorCode } from '@wcs/core';
