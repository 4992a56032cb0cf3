import type { Server } from 'node:http';

/** For the benchmarks' child servers: SIGTERM or SIGINT closes the server and exits (at most 2 s later). */
export function closeOnSignals(server: Server): void {
  const stop = () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
    setTimeout(() => process.exit(0), 2000).unref();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
