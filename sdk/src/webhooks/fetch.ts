/**
 * A handler of Web-standard Request → Response for the service's callbacks: Next.js route
 * handlers (app/…/route.ts: `export const POST = fetchWebhookHandler({...})`), Cloudflare
 * Workers, Deno, Bun, Hono. It reads the body bytes itself (request.arrayBuffer()), so there is
 * no raw-body pitfall. Answers as the express middleware does (handler.ts).
 */
import { processWebhook, verifierFrom, type WebhookHandlerOptions } from './handler.js';

export interface FetchWebhookOptions extends WebhookHandlerOptions<Request> {
  /**
   * The signed path (the callback URL's path as configured in the service). Default: the path of
   * request.url. Give it when a proxy or a basePath changes what the app sees.
   */
  path?: string | ((request: Request) => string);
}

export function fetchWebhookHandler(o: FetchWebhookOptions): (request: Request) => Promise<Response> {
  const verifier = verifierFrom(o);
  return async (request: Request): Promise<Response> => {
    if (request.method !== 'POST') {
      return new Response(JSON.stringify({ code: 1, msg: 'callbacks are POSTed' }), { status: 405, headers: { Allow: 'POST', 'Content-Type': 'application/json; charset=utf-8' } });
    }
    const body = new Uint8Array(await request.arrayBuffer());
    const path = typeof o.path === 'function' ? o.path(request) : (o.path ?? new URL(request.url).pathname);
    const outcome = await processWebhook(verifier, { body, headers: request.headers, path }, request, o);
    return new Response(outcome.body, { status: outcome.status, headers: { 'Content-Type': 'application/json; charset=utf-8' } });
  };
}
