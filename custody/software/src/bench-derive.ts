// Derivation benchmark (a script, not a test): node custody/software/dist/bench-derive.js [count]
// getPublicKey for new indices (secp256k1 from the cached account xpub; ed25519 SLIP-10) versus
// Trust Wallet Core's HDWallet.getKey(...) + public key for the same paths.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { initWasm } from '@trustwallet/wallet-core';
import type { KeyRef, KeySpec } from '@wcs/core';
import { initializeSoftwareKeystore, SoftwareKeyStore } from './software-keystore';

const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const SPECS: Record<'secp256k1' | 'ed25519', KeySpec> = {
  secp256k1: { namespace: 'evm', curve: 'secp256k1', pathTemplate: "m/44'/60'/{account}'/0/{index}" },
  ed25519: { namespace: 'solana', curve: 'ed25519', pathTemplate: "m/44'/501'/{account}'/{index}'" },
};

function out(line: string): void {
  process.stdout.write(`${line}\n`);
}

async function rate(label: string, count: number, fn: (i: number) => unknown): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < count; i++) await fn(i);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const perSecond = count / seconds;
  out(`${label.padEnd(58)} ${perSecond.toFixed(0).padStart(8)} /s  (${((seconds / count) * 1e6).toFixed(1)} µs each, n=${count})`);
  return perSecond;
}

async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 2000);
  const dir = await mkdtemp(path.join(tmpdir(), 'wcs-bench-derive-'));
  try {
    const options = { dataDir: dir, env: { WCS_KEYSTORE_PASSPHRASE: 'bench' }, devMode: false };
    await initializeSoftwareKeystore(options, { mnemonic: MNEMONIC });
    const store = new SoftwareKeyStore(options);
    const t0 = process.hrtime.bigint();
    await store.init();
    out(`unlock (scrypt N=2^15, r=8, p=1 + BIP-39 PBKDF2 + masters): ${(Number(process.hrtime.bigint() - t0) / 1e6).toFixed(0)} ms`);
    const core = await initWasm();
    const wallet = core.HDWallet.createWithMnemonic(MNEMONIC, '');
    out(`node ${process.version}, ${count} new indices per run; account (applicationId) 1, warmed with index 0 first`);

    const ref = (curve: keyof typeof SPECS, index: number, applicationId = 1): KeyRef => ({ applicationId, spec: SPECS[curve], purpose: 'deposit', index });
    const pathOf = (curve: keyof typeof SPECS, index: number, applicationId = 1): string =>
      SPECS[curve].pathTemplate.replace('{account}', String(applicationId)).replace('{index}', String(index));

    // warm-up: JIT, noble precomputes, account xpub cache; then fresh indices for each measured run
    let next = 1;
    const warm = async (): Promise<void> => {
      for (let i = 0; i < 200; i++) {
        await store.getPublicKey(ref('secp256k1', 1_000_000 + i));
        await store.getPublicKey(ref('ed25519', 1_000_000 + i));
        const k = wallet.getKey(core.CoinType.ethereum, pathOf('secp256k1', 1_000_000 + i));
        k.getPublicKeySecp256k1(true).delete();
        k.delete();
      }
    };
    await warm();

    out('');
    const ours = await rate('secp256k1 getPublicKey (cached account xpub, CKDpub)', count, () => store.getPublicKey(ref('secp256k1', next++)));
    const base = next;
    const theirs = await rate('secp256k1 wallet-core getKey + getPublicKeySecp256k1', count, (i) => {
      const k = wallet.getKey(core.CoinType.ethereum, pathOf('secp256k1', base + i));
      const p = k.getPublicKeySecp256k1(true);
      p.delete();
      k.delete();
    });
    next += count;
    await rate('secp256k1 getPublicKey, new application each time (cold xpub)', Math.min(count, 500), (i) => store.getPublicKey(ref('secp256k1', 0, 10_000 + i)));
    const edOurs = await rate('ed25519 getPublicKey (SLIP-10, all hardened)', count, () => store.getPublicKey(ref('ed25519', next++)));
    const edBase = next;
    const edTheirs = await rate('ed25519 wallet-core getKey + getPublicKeyEd25519', count, (i) => {
      const k = wallet.getKey(core.CoinType.solana, pathOf('ed25519', edBase + i));
      const p = k.getPublicKeyEd25519();
      p.delete();
      k.delete();
    });
    next += count;
    const digest = new Uint8Array(32).fill(7);
    const signCount = Math.max(100, Math.floor(count / 4));
    await rate('secp256k1 sign (private derivation + sign + verify)', signCount, (i) => store.sign(ref('secp256k1', i), digest));
    await rate('ed25519 sign (SLIP-10 derivation + sign + verify)', signCount, (i) => store.sign(ref('ed25519', i), digest));
    out('');
    out(`ratio ours / wallet-core: secp256k1 ${(ours / theirs).toFixed(2)}x, ed25519 ${(edOurs / edTheirs).toFixed(2)}x`);
    wallet.delete();
    await store.destroy();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exitCode = 1;
});
