import { z } from 'zod';
import { ReadyChecks } from '../../responses/support';
import type { OperationDoc } from '../document';

/** The operations of the unauthenticated service routes (/healthz, /readyz, /openapi.json). */
export const SERVICE_OPERATIONS: readonly OperationDoc[] = [
  {
    method: 'get',
    path: '/healthz',
    operationId: 'health',
    summary: 'Liveness (unauthenticated)',
    signed: false,
    data: z.strictObject({
      status: z.literal('ok'),
    }),
    description200: 'Envelope with data.status = ok',
    examples: {
      "ok": {
        "summary": "The process is up",
        "value": {
          "code": 0,
          "data": {
            "status": "ok"
          },
          "msg": ""
        }
      }
    },
  },
  {
    method: 'get',
    path: '/readyz',
    operationId: 'ready',
    summary: 'Readiness: database reachable and migrated, key store open (unauthenticated)',
    signed: false,
    data: z.object({
      status: z.literal('ready'),
      checks: ReadyChecks,
    }),
    description200: 'data.status = ready, data.checks',
    examples: {
      "ready": {
        "summary": "Ready",
        "value": {
          "code": 0,
          "data": {
            "status": "ready",
            "checks": {
              "database": "ok",
              "credentialCache": "listening",
              "keystore": "ok"
            }
          },
          "msg": ""
        }
      }
    },
    responses: {
      "503": {
        "description": "code 1000009002, data.status = not_ready, data.checks names what failed",
        "content": {
          "application/json": {
            "schema": {
              "allOf": [
                {
                  "$ref": "#/components/schemas/Envelope"
                },
                {
                  "properties": {
                    "code": {
                      "const": 1000009002
                    },
                    "data": {
                      "type": "object",
                      "required": [
                        "status",
                        "checks"
                      ],
                      "properties": {
                        "status": {
                          "const": "not_ready"
                        },
                        "checks": {
                          "$ref": "#/components/schemas/ReadyChecks"
                        }
                      }
                    }
                  }
                }
              ]
            },
            "examples": {
              "notReady": {
                "summary": "The key store could not be opened yet",
                "value": {
                  "code": 1000009002,
                  "msg": "Service is not ready",
                  "data": {
                    "status": "not_ready",
                    "checks": {
                      "database": "ok",
                      "credentialCache": "listening",
                      "keystore": "unavailable: wrong passphrase"
                    }
                  }
                }
              }
            }
          }
        },
        "headers": {
          "X-Request-Id": {
            "$ref": "#/components/headers/XRequestId"
          }
        }
      }
    },
  },
  {
    method: 'get',
    path: '/openapi.json',
    operationId: 'openapi',
    summary: 'This document (unauthenticated)',
    signed: false,
    document: z.object({
      openapi: z.string().regex(/^3\.1\.\d+$/),
      info: z.object({}),
      paths: z.object({}),
    }),
    description200: 'This OpenAPI 3.1 document itself (not an envelope)',
    examples: {
      "document": {
        "summary": "The start of the document",
        "value": {
          "openapi": "3.1.0",
          "info": {
            "title": "Wallet Custody Service API",
            "version": "1"
          },
          "paths": {}
        }
      }
    },
  },
];
