#!/usr/bin/env node
// Signs and sends one request exactly as ../shared/spec/wallet-custody-api.md says.
// usage: node examples/signed-request.js METHOD PATH[?query] API_KEY API_SECRET [JSON_BODY]
// BASE_URL defaults to http://127.0.0.1:8080.
'use strict';
const crypto = require('node:crypto');
const [method, pathAndQuery, apiKey, apiSecret, body = ''] = process.argv.slice(2);
if (!method || !pathAndQuery || !apiKey || !apiSecret) {
  process.stderr.write('usage: node examples/signed-request.js METHOD PATH API_KEY API_SECRET [JSON_BODY]\n');
  process.exit(2);
}
const base = process.env.BASE_URL || 'http://127.0.0.1:8080';
const timestamp = String(Date.now());
const nonce = crypto.randomBytes(16).toString('hex');
const path = pathAndQuery.split('?')[0];
const bodyHash = crypto.createHash('sha256').update(body, 'utf8').digest('hex');
const stringToSign = [method.toUpperCase(), path, timestamp, nonce, bodyHash].join('\n');
const signature = crypto.createHmac('sha256', apiSecret).update(stringToSign, 'utf8').digest('hex');
fetch(base + pathAndQuery, {
  method: method.toUpperCase(),
  headers: {
    'X-Api-Key': apiKey, 'X-Timestamp': timestamp, 'X-Nonce': nonce, 'X-Signature': signature,
    ...(body ? { 'Content-Type': 'application/json' } : {}),
  },
  body: body || undefined,
}).then(async (res) => {
  process.stdout.write(`HTTP ${res.status}\n${JSON.stringify(JSON.parse(await res.text()), null, 2)}\n`);
}, (e) => {
  process.stderr.write(`request failed: ${e.message}\n`);
  process.exit(1);
});
