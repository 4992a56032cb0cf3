import path from 'node:path';
import { expect } from 'chai';
import { WalletContractV4 } from '@ton/ton';
import { runAdapterConformance, type AdapterFixture } from '@wcs/core/testing';
import { plugin } from './index';
import { tonChain } from './test-support/fixtures';

// Vectors: wallet v4R2 addresses of the keys, as @ton/ton's WalletContractV4 (the wallet's reference
// library) derives them; the code cell is checked below against the published v4R2 code hash.
const ONE = '0000000000000000000000000000000000000000000000000000000000000001';
const TEST_KEY = '8d6ca5bec4774252bc700c5a8b4c2bb1904029f7421aa2afc21d6d038f275f83'; // SLIP-10 m/44'/607'/1'/0' of the test mnemonic
const src = '@ton/ton WalletContractV4.create (workchain 0)';

const sandbox = tonChain();
const mainnet = tonChain({ id: 9102, code: 'TON', name: 'TON', environment: 'live', network: 'mainnet' });

const fixtures: AdapterFixture[] = [
  {
    chain: sandbox,
    derivations: [
      { publicKeyHex: ONE, address: '0QA19TJXxc8YBxZyNrzubvpd5yDvG5YSsRdNjZEGKnuySo3K', source: src },
      { publicKeyHex: TEST_KEY, address: '0QBS0WyIIPDUwJT7hhILvR-_nYxSKq7kbRJd2Y-91eb_xgQD', source: src },
    ],
    valid: [
      { address: '0QA19TJXxc8YBxZyNrzubvpd5yDvG5YSsRdNjZEGKnuySo3K', normalized: '0QA19TJXxc8YBxZyNrzubvpd5yDvG5YSsRdNjZEGKnuySo3K', source: 'non-bounceable test-only' },
      { address: 'kQA19TJXxc8YBxZyNrzubvpd5yDvG5YSsRdNjZEGKnuyStAP', normalized: 'kQA19TJXxc8YBxZyNrzubvpd5yDvG5YSsRdNjZEGKnuyStAP', source: 'bounceable kept bounceable' },
      { address: 'kQBS0WyIIPDUwJT7hhILvR+/nYxSKq7kbRJd2Y+91eb/xlnG', normalized: 'kQBS0WyIIPDUwJT7hhILvR-_nYxSKq7kbRJd2Y-91eb_xlnG', source: 'standard base64 → URL-safe' },
      { address: '0:35f53257c5cf1807167236bcee6efa5de720ef1b9612b1174d8d91062a7bb24a', normalized: '0QA19TJXxc8YBxZyNrzubvpd5yDvG5YSsRdNjZEGKnuySo3K', source: 'raw form → non-bounceable' },
      { address: '0QA19TJXxc8YBxZyNrzubvpd5yDvG5YSsRdNjZEGKnuySo3K', memo: '123456', normalized: '0QA19TJXxc8YBxZyNrzubvpd5yDvG5YSsRdNjZEGKnuySo3K', normalizedMemo: '123456', source: 'numeric comment' },
      { address: '0QA19TJXxc8YBxZyNrzubvpd5yDvG5YSsRdNjZEGKnuySo3K', memo: 'order 17 ✓', normalized: '0QA19TJXxc8YBxZyNrzubvpd5yDvG5YSsRdNjZEGKnuySo3K', normalizedMemo: 'order 17 ✓', source: 'text comment' },
    ],
    invalid: [
      { address: 'UQA19TJXxc8YBxZyNrzubvpd5yDvG5YSsRdNjZEGKnuySjZA', why: 'a mainnet address on a test network' },
      { address: '0QA19TJXxc8YBxZyNrzubvpd5yDvG5YSsRdNjZEGKnuySo3L', why: 'checksum' },
      { address: '-1:35f53257c5cf1807167236bcee6efa5de720ef1b9612b1174d8d91062a7bb24a', why: 'masterchain' },
      { address: '0:35f53257c5cf1807167236bcee6efa5de720ef1b9612b1174d8d91062a7bb2', why: 'short raw hash' },
      { address: '0QA19TJXxc8YBxZyNrzubvpd5yDvG5YSsRdNjZEGKnuySo3K', memo: 'x'.repeat(121), why: 'comment longer than one cell' },
      { address: '0QA19TJXxc8YBxZyNrzubvpd5yDvG5YSsRdNjZEGKnuySo3K', memo: 'a\nb', why: 'control character in the comment' },
    ],
    memos: {
      formatted: [{ index: 1n, memo: '1' }, { index: 4294967296n, memo: '4294967296' }, { index: 18446744073709551615n, memo: '18446744073709551615' }],
      invalid: ['', '   ', 'x'.repeat(121), 'tab\there', '\u0000'],
    },
  },
  {
    chain: mainnet,
    derivations: [{ publicKeyHex: ONE, address: 'UQA19TJXxc8YBxZyNrzubvpd5yDvG5YSsRdNjZEGKnuySjZA', source: src }],
    valid: [
      { address: 'EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs', normalized: 'EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs', source: 'USDT jetton master (bounceable)' },
    ],
    invalid: [{ address: '0QA19TJXxc8YBxZyNrzubvpd5yDvG5YSsRdNjZEGKnuySo3K', why: 'a test-only address on mainnet' }],
    memos: { formatted: [{ index: 7n, memo: '7' }], invalid: [''] },
  },
];

describe('TON adapter', () => {
  // the package's own folder (dist/ is one below it): the suite loads @wcs/adapter-ton from there by its name
  runAdapterConformance(plugin, fixtures, { packageDir: path.resolve(__dirname, '..') });

  it('derives wallet v4R2: the code cell has the published v4R2 code hash', () => {
    const w = WalletContractV4.create({ workchain: 0, publicKey: Buffer.from(ONE, 'hex') });
    expect(w.init.code.hash().toString('hex')).to.equal('feb5ff6820e2ff0d9483e7e0d62c817d846789fb4ae580c878866d959dabd5c0');
  });

  it('refuses a chain of another family', () => {
    expect(() => plugin.create({ ...sandbox, family: 'stellar' })).to.throw(/serves family ton/);
  });
});
