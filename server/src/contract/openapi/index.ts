import '../responses/support';
import '../responses/common';
import { buildDocument } from './document';
import { OPERATIONS } from './operations';
import { WEBHOOKS } from './webhooks';

export { buildDocument, componentSchemas, type OperationDoc, type WebhookDoc } from './document';
export { OPERATIONS } from './operations';
export { WEBHOOKS } from './webhooks';

/** The API's OpenAPI document, generated from the contract's schemas (server/openapi.json is its committed copy). */
export function openApiDocument(): Record<string, unknown> {
  return buildDocument(OPERATIONS, WEBHOOKS);
}
