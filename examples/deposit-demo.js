#!/usr/bin/env node
// A demo merchant against `npx wcs start` in dev mode (local anvil devnets, see README "Deposits
// end to end"): it receives signed RECHARGE callbacks on a local receiver and verifies them as
// the spec says, creates a deposit address, sends devnet ETH and the devnet token DUSD to it, and
// prints the timeline until both deposits are SETTLED.
// usage: node examples/deposit-demo.js APP_ID API_KEY API_SECRET
// BASE_URL defaults to http://127.0.0.1:8080; the devnets are read from WCS_DATA_DIR (./data)/devnets.json.
'use strict';
const crypto = require('node:crypto');
const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const [appId, apiKey, apiSecret] = process.argv.slice(2);
if (!appId || !apiKey || !apiSecret) {
  process.stderr.write('usage: node examples/deposit-demo.js APP_ID API_KEY API_SECRET\n');
  process.exit(2);
}
const base = process.env.BASE_URL || 'http://127.0.0.1:8080';
const dataDir = path.resolve(process.env.WCS_DATA_DIR || 'data');
const devnets = JSON.parse(fs.readFileSync(path.join(dataDir, 'devnets.json'), 'utf8'));
const eth = devnets.chains.ETH;
if (!eth || !devnets.token) throw new Error(`no ETH devnet in ${dataDir}/devnets.json: start the service with \`npx wcs start\` (dev mode) first`);
const { ethers } = require(require.resolve('ethers', { paths: [path.join(__dirname, '..', 'adapters', 'evm')] }));

const t0 = Date.now();
const log = (what) => process.stdout.write(`${((Date.now() - t0) / 1000).toFixed(2).padStart(6)} s  ${what}\n`);
const sha256 = (b) => crypto.createHash('sha256').update(b).digest('hex');
const hmac = (s) => crypto.createHmac('sha256', apiSecret).update(s, 'utf8').digest('hex');

async function signed(method, pathAndQuery, body = '') {
  const timestamp = String(Date.now());
  const nonce = crypto.randomBytes(16).toString('hex');
  const signature = hmac([method, pathAndQuery.split('?')[0], timestamp, nonce, sha256(Buffer.from(body, 'utf8'))].join('\n'));
  const res = await fetch(base + pathAndQuery, {
    method,
    headers: { 'X-Api-Key': apiKey, 'X-Timestamp': timestamp, 'X-Nonce': nonce, 'X-Signature': signature, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body || undefined,
  });
  const env = await res.json();
  if (env.code !== 0) throw new Error(`${method} ${pathAndQuery}: ${env.code} ${env.msg}`);
  return env.data;
}

/** The spec's receiver rules: raw bytes, 5-minute window, constant-time compare. */
function verify(req, raw) {
  const ts = req.headers['x-timestamp'];
  const nonce = req.headers['x-nonce'];
  const sig = req.headers['x-signature'] || '';
  if (req.headers['x-api-key'] !== apiKey || !/^\d{13}$/.test(ts || '') || Math.abs(Date.now() - Number(ts)) > 300000) return false;
  const expected = Buffer.from(hmac(['POST', req.url.split('?')[0], ts, nonce, sha256(raw)].join('\n')), 'hex');
  const got = Buffer.from(sig, 'hex');
  return got.length === expected.length && crypto.timingSafeEqual(got, expected);
}

async function main() {
  const settled = new Set();
  let done;
  const finished = new Promise((r) => (done = r));
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      if (!verify(req, raw)) {
        log('callback REJECTED: bad signature');
        res.writeHead(401).end('bad signature');
        return;
      }
      const e = JSON.parse(raw.toString('utf8'));
      log(`callback ${e.event} id=${e.id} ${e.txStatus.padEnd(9)} ${e.amount} (token ${e.chainTokenId}) confirmations ${e.confirmations}/${e.minConfirmations} block ${e.blockHeight} (signature ok)`);
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"code":0}');
      if (e.txStatus === 'SETTLED') settled.add(e.id);
      if (settled.size === 2) done();
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const callbackUrl = `http://127.0.0.1:${server.address().port}/demo/recharge`;
  execFileSync(process.execPath, [path.join(__dirname, '..', 'server', 'bin', 'wcs.js'), 'app', 'set-callback', '--app', appId, '--biz-type', 'RECHARGE', '--url', callbackUrl], { stdio: 'inherit' });
  log(`receiver listening on ${callbackUrl}`);

  const user = `demo-user-${crypto.randomBytes(3).toString('hex')}`;
  const address = await signed('POST', '/api/v1/wallet/address/create', JSON.stringify({ chainCode: 'ETH', externalUserId: user }));
  log(`deposit address for ${user}: ${address.address}`);

  const provider = new ethers.JsonRpcProvider(eth.url, undefined, { staticNetwork: true });
  const funder = new ethers.Wallet('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80', provider); // anvil dev account 0
  const minter = new ethers.Wallet('0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6', provider); // anvil dev account 9, deployed DUSD
  const tx1 = await funder.sendTransaction({ to: address.address, value: ethers.parseEther('0.5') });
  log(`sent 0.5 ETH: ${tx1.hash}`);
  const token = new ethers.Contract(devnets.token.contract, ['function mint(address to, uint256 amount)'], minter);
  const tx2 = await token.mint(address.address, ethers.parseUnits('25', 18));
  log(`sent 25 ${devnets.token.symbol}: ${tx2.hash}`);

  const timeout = setTimeout(() => {
    log('timed out waiting for SETTLED callbacks (is `wcs start` running in dev mode?)');
    process.exit(1);
  }, 120000);
  await finished;
  clearTimeout(timeout);
  for (const id of settled) {
    const r = await signed('GET', `/api/v1/wallet/recharge/get?id=${id}`);
    log(`recharge/get ${id}: ${r.amount} ${r.tokenSymbol} on ${r.chainCode}, ${r.txStatus}, tx ${r.txHash}`);
  }
  provider.destroy();
  server.close();
}

main().catch((e) => {
  process.stderr.write(`demo failed: ${e.message}\n`);
  process.exit(1);
});
