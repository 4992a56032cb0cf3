import { expect } from 'chai';
import { ChainRpcError, ChainTransferError, KEYSTORE_UNAVAILABLE_CODES, KeyStoreError, WcsError, type KeyStoreErrorCode } from '@wcs/core';
import { toWcsError } from './app';

describe('toWcsError: key-store outages are 503 KEYSTORE_UNAVAILABLE', () => {
  const unavailable = [...KEYSTORE_UNAVAILABLE_CODES];

  it('every "retry later" key-store code, thrown directly or anywhere in the cause chain', () => {
    expect(unavailable).to.include.members(['KEYSTORE_LOCKED', 'KEYSTORE_UNAVAILABLE', 'KEYSTORE_LOGIN']);
    for (const code of unavailable) {
      const ks = new KeyStoreError(code, `internal detail of ${code}`);
      const wrapped = new Error('signing failed', { cause: new Error('session', { cause: ks }) });
      for (const thrown of [ks, wrapped, new WcsError('INTERNAL_ERROR', { cause: ks })]) {
        const { error, fault } = toWcsError(thrown);
        expect({ code: error.code, http: error.httpStatus, name: error.errorName, fault }, code).to.deep.equal({
          code: 1000009003,
          http: 503,
          name: 'KEYSTORE_UNAVAILABLE',
          fault: true,
        });
        expect(error.cause).to.equal(thrown);
      }
    }
  });

  it('other key-store codes are internal faults (500), and merchant-facing WcsErrors keep their code', () => {
    const others: KeyStoreErrorCode[] = ['KEYSTORE_CONFIG', 'KEY_REF_INVALID', 'KEY_CURVE_MISMATCH', 'KEY_PAYLOAD_INVALID', 'KEYSTORE_FILE_INVALID'];
    for (const code of others) {
      expect(KEYSTORE_UNAVAILABLE_CODES.has(code), code).to.equal(false);
      const { error, fault } = toWcsError(new KeyStoreError(code, 'x'));
      expect({ name: error.errorName, fault }, code).to.deep.equal({ name: 'INTERNAL_ERROR', fault: true });
    }
    const business = new WcsError('CHAIN_NOT_ENABLED', { cause: new KeyStoreError('KEYSTORE_LOCKED', 'x') });
    expect(toWcsError(business)).to.deep.equal({ error: business, fault: false });
  });

  it('a cyclic cause chain ends', () => {
    const a = new Error('a') as Error & { cause?: unknown };
    const b = new Error('b', { cause: a });
    a.cause = b;
    expect(toWcsError(a).error.errorName).to.equal('INTERNAL_ERROR');
  });

  it("an adapter's errors answer INTERNAL_ERROR (500), as plain errors did: no code or message of their own reaches a client", () => {
    for (const thrown of [new ChainRpcError('RPC_UNAVAILABLE', 'ETH RPC http://node unavailable'), new ChainTransferError('AMOUNT_BELOW_DUST', 'dust')]) {
      const { error, fault } = toWcsError(thrown);
      expect({ code: error.code, http: error.httpStatus, fault, cause: error.cause }).to.deep.equal({ code: 1000009001, http: 500, fault: true, cause: thrown });
    }
  });
});
