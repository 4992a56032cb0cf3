// Throwaway SoftHSM2 tokens for the end-to-end tests: the pkcs11 package's own test support.
export { createTestToken, removeTestToken, SOFTHSM_LIBRARY, type TestToken } from '@wcs/custody-pkcs11/testing';
