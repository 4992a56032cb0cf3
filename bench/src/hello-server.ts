/**
 * Baseline for the signed-support-chains benchmark: the smallest useful express 5 app,
 * unsigned, in its own process. It ignores the signature headers the load generator
 * sends (the client signs every request to both targets so client cost is identical).
 *
 * Usage: PORT=<port> HOST=127.0.0.1 node bench/dist/hello-server.js
 */
import express from 'express';
import type { Server } from 'node:http';
import { closeOnSignals } from './lib/serve';

const port = Number(process.env.PORT ?? '0');
const host = process.env.HOST ?? '127.0.0.1';

const app = express();
app.get('/hello', (_req, res) => {
  res.json({ code: 0, data: 'hello', msg: '' });
});

const server: Server = app.listen(port, host, () => {
  process.stdout.write(`hello server listening on http://${host}:${port}\n`);
});
server.keepAliveTimeout = 65_000;

closeOnSignals(server);
