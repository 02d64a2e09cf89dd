// One reading of Retry-After (schemas/retry-after.ts) for `emi buy`, the buyer page and the MCP paid tools: seconds or
// an HTTP date, within 1..the caller's cap. The MCP tool's refusal names the wait in seconds, never "<date> s.".
import { describe, expect, it } from 'vitest';
import { toolResultOf } from '../mcp/paid-tools.ts';
import { readOutcome } from '../paywall-worker/buy-command.ts';
import { PAID_RESOURCES } from '../schemas/resources.ts';
import { retryAfterSeconds } from '../schemas/retry-after.ts';

const NOW = Date.parse('2025-01-01T00:00:00Z');
const IN_45_SECONDS = 'Wed, 01 Jan 2025 00:00:45 GMT';

describe('retryAfterSeconds', () => {
  it('reads delay-seconds and an HTTP date, at least 1 s and at most the cap', () => {
    expect(retryAfterSeconds('30', NOW, 600)).toBe(30);
    expect(retryAfterSeconds(' 0 ', NOW, 600)).toBe(1);
    expect(retryAfterSeconds('86400', NOW, 600)).toBe(600);
    expect(retryAfterSeconds('86400', NOW, 30)).toBe(30);
    expect(retryAfterSeconds(IN_45_SECONDS, NOW, 600)).toBe(45);
    expect(retryAfterSeconds('Tue, 31 Dec 2024 23:00:00 GMT', NOW, 600)).toBe(1);
  });

  it('is null without a header or with one it cannot read', () => {
    expect(retryAfterSeconds(null, NOW, 600)).toBeNull();
    expect(retryAfterSeconds('', NOW, 600)).toBeNull();
    expect(retryAfterSeconds('soon', NOW, 600)).toBeNull();
    // Neither delay-seconds nor an HTTP date, though Date.parse reads each as a date in the past.
    for (const odd of ['-5', '1.5', '5, 10', '2025-01-01'])
      expect(retryAfterSeconds(odd, NOW, 600), odd).toBeNull();
  });
});

describe('the MCP paid tool’s refusal with a Retry-After', () => {
  const resource = PAID_RESOURCES[0];
  if (!resource) throw new Error('no paid resource');
  const refusal = async (retryAfter: string): Promise<string> => {
    const response = new Response(JSON.stringify({ error: 'paywall_busy', message: 'Busy.' }), {
      status: 503,
      headers: { 'Content-Type': 'application/json', 'Retry-After': retryAfter },
    });
    const result = await toolResultOf(response, resource, NOW);
    return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
  };

  it('names an HTTP-date Retry-After as the seconds left, not as "<date> s."', async () => {
    const text = await refusal(IN_45_SECONDS);
    expect(text).toContain('Retry after 45 s.');
    expect(text).not.toContain('GMT');
  });

  it('names delay-seconds as they are, and leaves out a Retry-After it cannot read', async () => {
    expect(await refusal('30')).toContain('Retry after 30 s.');
    expect(await refusal('soon')).not.toContain('Retry after');
  });
});

describe('emi buy’s wait on a 503', () => {
  it('honours an HTTP-date Retry-After, capped at the paywall’s 30 s', () => {
    const attempt = (retryAfter: string) =>
      readOutcome(
        {
          kind: 'answer',
          status: 503,
          body: { error: 'payment_in_progress', message: 'Still settling.' },
          settlement: null,
          retryAfter,
        },
        'http://127.0.0.1',
        NOW,
      );
    expect(attempt(IN_45_SECONDS)).toMatchObject({ kind: 'retry', waitSeconds: 30 });
    expect(attempt('Wed, 01 Jan 2025 00:00:12 GMT')).toMatchObject({ kind: 'retry', waitSeconds: 12 });
  });
});
