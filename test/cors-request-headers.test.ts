// The request headers a browser on another origin may send, as every host's preflight answers them (one policy,
// schemas/delivery.ts): each one an official client sends, by name, so that dropping one from the policy fails here
// rather than as a CORS error in a buyer's browser. x402 v2's PAYMENT-SIGNATURE; v1's X-PAYMENT (a v1 client gets
// the paywall's "use version 2" answer instead of a network error); the Access-Control-Expose-Headers request
// header `@x402/fetch` adds; the MCP streamable HTTP client's headers on /mcp.
import { describe, expect, it } from 'vitest';
import { MCP_PATH, preflightAnswer } from '../schemas/delivery.ts';
import { PAID_RESOURCES } from '../schemas/resources.ts';

const allowed = (path: string): string[] =>
  (preflightAnswer(path).headers.get('access-control-allow-headers') ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase());

describe('the preflight of a paid path', () => {
  it.each(PAID_RESOURCES.map((resource) => resource.path))(
    '%s allows the payment headers of x402 v2 and v1 and what @x402/fetch adds',
    (path) => {
      expect(preflightAnswer(path).status).toBe(204);
      expect(allowed(path)).toEqual(
        expect.arrayContaining([
          'payment-signature',
          'x-payment',
          'access-control-expose-headers',
          'content-type',
        ]),
      );
    },
  );
});

describe('the preflight of /mcp', () => {
  it("allows the MCP streamable HTTP client's headers", () => {
    expect(allowed(MCP_PATH)).toEqual(
      expect.arrayContaining([
        'content-type',
        'accept',
        'mcp-session-id',
        'mcp-protocol-version',
        'last-event-id',
      ]),
    );
  });
});
