/**
 * The parts of the OpenAPI document that are not the API's shapes: the description of the API,
 * its servers and signing scheme, the shared responses (errors, rate limits, the key store), the
 * response headers and the callback request headers. The shapes (components.schemas, paths,
 * webhooks) come from the zod schemas (document.ts).
 */
/* eslint-disable */
export const INFO = {
  "title": "Wallet Custody Service API",
  "version": "1",
  "description": "Merchant API of the wallet custody service. It follows the Wallet Custody API specification; docs/api.md states it in our words, with the decisions taken where the specification is silent. Every request carries the four authentication headers; every response is the {code, data, msg} envelope (docs/errors.md). The webhooks are the signed callbacks the service POSTs to the merchant's callback URLs (docs/callbacks.md): one per event, each acknowledged by HTTP 200 with {\"code\":0}, success or ok."
} as const;

export const SERVERS = [
  {
    "url": "http://127.0.0.1:8080"
  }
];

export const SECURITY = [
  {
    "ApiKey": [],
    "Timestamp": [],
    "Nonce": [],
    "Signature": []
  }
];

export const SECURITY_SCHEMES = {
  "ApiKey": {
    "type": "apiKey",
    "in": "header",
    "name": "X-Api-Key",
    "description": "pk_test_… or pk_live_…"
  },
  "Timestamp": {
    "type": "apiKey",
    "in": "header",
    "name": "X-Timestamp",
    "description": "13-digit UNIX milliseconds, within ±300000 ms of server time"
  },
  "Nonce": {
    "type": "apiKey",
    "in": "header",
    "name": "X-Nonce",
    "description": "8-128 chars of [A-Za-z0-9._~+/=-]; (apiKey, nonce) accepted once within 10 minutes"
  },
  "Signature": {
    "type": "apiKey",
    "in": "header",
    "name": "X-Signature",
    "description": "lowercase hex HMAC-SHA256(apiSecret, METHOD\\npath\\nX-Timestamp\\nX-Nonce\\nsha256hex(raw body))"
  }
};

export const RESPONSES = {
  "Error": {
    "description": "Envelope with a non-zero code (docs/errors.md gives the code and HTTP status of each class). HTTP 503 with code 1000009002 (SERVICE_UNAVAILABLE) and Retry-After while the service cannot reach its database (down or restarting): nothing was done; retry the same request with a new nonce after Retry-After seconds.",
    "content": {
      "application/json": {
        "schema": {
          "$ref": "#/components/schemas/ErrorEnvelope"
        },
        "examples": {
          "invalidParameter": {
            "summary": "HTTP 400: a parameter is missing or invalid",
            "value": {
              "code": 1000001003,
              "data": null,
              "msg": "externalUserId: is required"
            }
          },
          "authSignatureInvalid": {
            "summary": "HTTP 401: the signature does not match",
            "value": {
              "code": 1001001007,
              "data": null,
              "msg": "Signature does not match"
            }
          },
          "notFound": {
            "summary": "HTTP 404: no such endpoint",
            "value": {
              "code": 1000002001,
              "data": null,
              "msg": "No endpoint GET /api/v1/wallet/nothing"
            }
          },
          "serviceUnavailable": {
            "summary": "HTTP 503: the database is unreachable (Retry-After says when to retry)",
            "value": {
              "code": 1000009002,
              "data": null,
              "msg": "Service temporarily unavailable"
            }
          }
        }
      }
    },
    "headers": {
      "X-Request-Id": {
        "$ref": "#/components/headers/XRequestId"
      },
      "Retry-After": {
        "description": "On a 503 SERVICE_UNAVAILABLE answer: whole seconds to wait before retrying (RFC 9110), at least 1.",
        "required": false,
        "schema": {
          "type": "integer",
          "minimum": 1
        },
        "example": 5
      }
    }
  },
  "KeyStoreUnavailable": {
    "description": "HTTP 503, code 1000009003 (KEYSTORE_UNAVAILABLE): the key store cannot serve now (not opened yet: wrong passphrase or PIN, HSM unreachable, token absent; or lost since). msg is the catalogue message, never the internal reason (GET /readyz shows it in data.checks.keystore). Nothing was persisted: retry later with a new nonce (the operation is idempotent).",
    "content": {
      "application/json": {
        "schema": {
          "allOf": [
            {
              "$ref": "#/components/schemas/ErrorEnvelope"
            },
            {
              "properties": {
                "code": {
                  "const": 1000009003
                },
                "msg": {
                  "const": "The key store is unavailable; retry later"
                }
              }
            }
          ]
        },
        "examples": {
          "keystoreUnavailable": {
            "summary": "The key store cannot serve now",
            "value": {
              "code": 1000009003,
              "data": null,
              "msg": "The key store is unavailable; retry later"
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
  },
  "RateLimited": {
    "description": "HTTP 429: code 1000003001 RATE_LIMITED (this API key's token bucket is empty) or 1000003002 AUTH_RATE_LIMITED (too many failed authentications from this client address; checked before anything else). Nothing was done and the nonce was not used: the same signed request may be sent again after Retry-After seconds (within the timestamp window), or a new one.",
    "headers": {
      "X-Request-Id": {
        "$ref": "#/components/headers/XRequestId"
      },
      "Retry-After": {
        "$ref": "#/components/headers/RetryAfter"
      },
      "RateLimit": {
        "$ref": "#/components/headers/RateLimit"
      },
      "RateLimit-Policy": {
        "$ref": "#/components/headers/RateLimitPolicy"
      }
    },
    "content": {
      "application/json": {
        "schema": {
          "allOf": [
            {
              "$ref": "#/components/schemas/ErrorEnvelope"
            },
            {
              "oneOf": [
                {
                  "properties": {
                    "code": {
                      "const": 1000003001
                    },
                    "msg": {
                      "const": "Too many requests for this API key; retry after the Retry-After seconds"
                    }
                  }
                },
                {
                  "properties": {
                    "code": {
                      "const": 1000003002
                    },
                    "msg": {
                      "const": "Too many failed authentications from this address; retry after the Retry-After seconds"
                    }
                  }
                }
              ]
            }
          ]
        },
        "examples": {
          "rateLimited": {
            "summary": "The API key is over its quota",
            "value": {
              "code": 1000003001,
              "data": null,
              "msg": "Too many requests for this API key; retry after the Retry-After seconds"
            }
          },
          "authRateLimited": {
            "summary": "Too many failed authentications from this address",
            "value": {
              "code": 1000003002,
              "data": null,
              "msg": "Too many failed authentications from this address; retry after the Retry-After seconds"
            }
          }
        }
      }
    }
  },
  "CallbackAck": {
    "description": "Acknowledged: HTTP 200 with an ACK marker in the body (docs/callbacks.md, ACK rule). The task becomes SUCCESS and is not sent again unless resent. The Content-Type of the answer is not looked at; the body is read up to 64 KiB (WCS_CALLBACK_MAX_RESPONSE_BYTES), a longer one is no ACK.",
    "content": {
      "application/json": {
        "schema": {
          "$ref": "#/components/schemas/CallbackAck"
        },
        "examples": {
          "code0": {
            "summary": "A JSON object with code 0",
            "value": {
              "code": 0
            }
          },
          "envelope": {
            "summary": "The API's own envelope style",
            "value": {
              "code": 0,
              "msg": "",
              "data": null
            }
          },
          "jsonString": {
            "summary": "The word, as a JSON string",
            "value": "success"
          }
        }
      },
      "text/plain": {
        "schema": {
          "$ref": "#/components/schemas/CallbackAck"
        },
        "examples": {
          "success": {
            "summary": "The bare word",
            "value": "success"
          },
          "ok": {
            "summary": "Any case",
            "value": "OK"
          }
        }
      }
    }
  },
  "CallbackNotAcknowledged": {
    "description": "Anything else is a failed attempt, retried with exponential backoff (60 x 2^retryTimes s, at most 10 retries, then the task stays FAILED until resent): any status other than 200 (redirects are not followed), a 200 without the ACK marker, a JSON object whose code is not 0 (the receiver's rejection), a timeout (WCS_CALLBACK_TIMEOUT_MS, default 10 s, for connect, send and the whole answer) or a network error. The attempt's errorReason (callback/attempts) says which."
  }
};

export const HEADERS = {
  "XRequestId": {
    "description": "Id of this request, on every response (errors included); the service logs it.",
    "required": true,
    "schema": {
      "type": "string",
      "format": "uuid"
    }
  },
  "RateLimit": {
    "description": "What is left of the quota (IETF draft-ietf-httpapi-ratelimit-headers structured field) for the policy \"api-key\": r = requests this API key may send now, t = seconds until its bucket is full again. Sent on every authenticated response when a limit applies (the service default or the application's own; docs/api.md, Rate limits). With several API processes r is the answering process's estimate; the 429 is exact.",
    "schema": {
      "type": "string",
      "pattern": "^\"api-key\";r=[0-9]+;t=[0-9]+$"
    },
    "example": "\"api-key\";r=143;t=1"
  },
  "RateLimitPolicy": {
    "description": "The quota policy (IETF draft-ietf-httpapi-ratelimit-headers structured field) of the API key's token bucket: q = bucket size (requests accepted at once after a quiet period), w = seconds an empty bucket takes to fill (q / w requests per second sustained). Sent with RateLimit.",
    "schema": {
      "type": "string",
      "pattern": "^\"api-key\";q=[0-9]+;w=[0-9]+$"
    },
    "example": "\"api-key\";q=200;w=2"
  },
  "RetryAfter": {
    "description": "Whole seconds to wait before retrying (RFC 9110), at least 1.",
    "required": true,
    "schema": {
      "type": "integer",
      "minimum": 1
    },
    "example": 2
  }
};

export const PARAMETERS = {
  "CallbackApiKey": {
    "name": "X-Api-Key",
    "in": "header",
    "required": true,
    "description": "The application's API key: the application the callback is for, whose API secret signed it.",
    "schema": {
      "type": "string",
      "pattern": "^pk_(test|live)_[0-9a-f]{32}$"
    },
    "example": "pk_live_3f9a2b7c4d1e8f60a5b9c2d7e4f1a3b8"
  },
  "CallbackTimestamp": {
    "name": "X-Timestamp",
    "in": "header",
    "required": true,
    "description": "13-digit UNIX milliseconds when this attempt was signed; new for every attempt. Refuse a callback more than 5 minutes from your clock.",
    "schema": {
      "type": "string",
      "pattern": "^[0-9]{13}$"
    },
    "example": "1736929800123"
  },
  "CallbackNonce": {
    "name": "X-Nonce",
    "in": "header",
    "required": true,
    "description": "32 lowercase hex characters (16 random bytes), new for every attempt.",
    "schema": {
      "type": "string",
      "pattern": "^[0-9a-f]{32}$"
    },
    "example": "9b4f0c2e7a1d4e58b3c6f9a0d2e5b7c1"
  },
  "CallbackSignature": {
    "name": "X-Signature",
    "in": "header",
    "required": true,
    "description": "Lowercase hex HMAC-SHA256, keyed with the application's API secret (the new one during a rotation's grace period), of POST\\npath\\nX-Timestamp\\nX-Nonce\\nsha256hex(raw body), where path is the callback URL's path without its query string. The scheme of the API's Signature header with the roles exchanged: verify it over the raw body bytes as received (re-serialised JSON differs), compare in constant time.",
    "schema": {
      "type": "string",
      "pattern": "^[0-9a-f]{64}$"
    },
    "example": "3f9a6c0e2b4d8f1a5c7e9b0d2f4a6c8e1b3d5f7a9c0e2b4d6f8a1c3e5b7d9f0a"
  },
  "CallbackUserAgent": {
    "name": "User-Agent",
    "in": "header",
    "required": true,
    "description": "Names the sender and its callback format version.",
    "schema": {
      "type": "string",
      "const": "wcs-callback/1"
    },
    "example": "wcs-callback/1"
  }
};
