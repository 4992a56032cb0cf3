import { expect } from 'chai';
import type { KeyStoreSupervisor } from '../custody/keystore-supervisor';
import { keyStoreState, safeFacts } from './keystore-view';

describe('key store view: what the page shows of the supervisor, never a secret', () => {
  it('flattens status() and drops any field named like a secret', () => {
    expect(safeFacts({
      backend: 'pkcs11', unlocked: true, pin: '1234', pinSource: 'environment variable WCS_PKCS11_PIN', tokenInfo: { label: 'wcs', serial: 'A1', sopin: 'x' },
      curves: ['secp256k1', 'ed25519'], passphrase: 'p', mnemonic: 'abandon', counters: { signs: 3 }, createdAt: null,
    })).to.deep.equal([
      ['backend', 'pkcs11'], ['unlocked', 'true'], ['pinSource', 'environment variable WCS_PKCS11_PIN'], ['tokenInfo.label', 'wcs'], ['tokenInfo.serial', 'A1'],
      ['curves', 'secp256k1, ed25519'], ['counters.signs', '3'], ['createdAt', 'null'],
    ]);
  });

  it('a supervisor this process never started (console-only) is "not opened"; a started one gives its check and status', async () => {
    const fake = (o: { attempts: number; ready: boolean; check: { ready: boolean; detail: string }; status?: () => Promise<Record<string, unknown>> }) => ({
      attempts: o.attempts, ready: o.ready, check: async () => o.check, store: { status: o.status ?? (async () => ({ backend: 'software', unlocked: o.ready, passphrase: 'never' })) },
    }) as unknown as KeyStoreSupervisor;
    expect(await keyStoreState('software', null)).to.deep.include({ opened: false, ready: null, detail: null, facts: [] });
    expect(await keyStoreState('software', fake({ attempts: 0, ready: false, check: { ready: false, detail: 'unavailable: not initialised yet' } }))).to.deep.include({ opened: false });
    expect(await keyStoreState('software', fake({ attempts: 3, ready: false, check: { ready: false, detail: 'unavailable: wrong passphrase' } }))).to.deep.equal({
      backend: 'software', opened: true, ready: false, detail: 'unavailable: wrong passphrase', attempts: 3, facts: [], factsError: null,
    });
    expect(await keyStoreState('software', fake({ attempts: 1, ready: true, check: { ready: true, detail: 'ok' } }))).to.deep.equal({
      backend: 'software', opened: true, ready: true, detail: 'ok', attempts: 1, facts: [['backend', 'software'], ['unlocked', 'true']], factsError: null,
    });
    const failing = await keyStoreState('pkcs11', fake({ attempts: 1, ready: true, check: { ready: true, detail: 'ok' }, status: async () => { throw new Error('token gone'); } }));
    expect(failing).to.include({ factsError: 'token gone' });
  });
});
