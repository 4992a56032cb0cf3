// Mocha root hooks of this package's tests: the throwaway SoftHSM2 directory is shared by every
// test file of the process (SoftHSM reads SOFTHSM2_CONF once), so it is removed once, at the end.
import { removeSoftHsm } from './testing';

export const mochaHooks = {
  afterAll(): void {
    removeSoftHsm();
  },
};
