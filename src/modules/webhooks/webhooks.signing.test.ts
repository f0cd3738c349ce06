import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { nextRetryDelay } from './webhooks.schedule.js';
import { generateWebhookSecret, signature, webhookHeaders } from './webhooks.signing.js';

describe('Standard Webhooks signing', () => {
  it('makes the signature the official library makes, and its verifier accepts ours', () => {
    const secret = generateWebhookSecret();
    const body = JSON.stringify({
      type: 'document.ingested',
      timestamp: '2026-03-14T09:26:53.589Z',
      data: { id: 'x' },
    });
    const now = new Date();
    const seconds = Math.floor(now.getTime() / 1000);
    expect(signature(secret, 'msg_1', seconds, body)).toBe(new Webhook(secret).sign('msg_1', now, body));
    const headers = webhookHeaders([secret], 'msg_1', seconds, body);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('sends one signature per secret; either verifies, a third does not', () => {
    const [current, previous, stranger] = [generateWebhookSecret(), generateWebhookSecret(), generateWebhookSecret()];
    const seconds = Math.floor(Date.now() / 1000);
    const headers = webhookHeaders([current, previous], 'msg_2', seconds, '{}');
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(() => new Webhook(current).verify('{}', headers)).not.toThrow();
    expect(() => new Webhook(previous).verify('{}', headers)).not.toThrow();
    expect(() => new Webhook(stranger).verify('{}', headers)).toThrow();
    expect(() => new Webhook(current).verify('{"a":1}', headers)).toThrow();
  });
});

describe('retry schedule', () => {
  const schedule = [5_000, 300_000, 1_800_000];

  it('waits each step of the schedule within ±20 %, then gives up', () => {
    expect(nextRetryDelay(schedule, 1, undefined, () => 0.5)).toBe(5_000);
    expect(nextRetryDelay(schedule, 2, undefined, () => 0)).toBe(240_000);
    expect(nextRetryDelay(schedule, 3, undefined, () => 0.999999)).toBeCloseTo(2_160_000, -1);
    expect(nextRetryDelay(schedule, 4, undefined)).toBeNull();
  });

  it("never retries sooner than the receiver's Retry-After, capped at a day", () => {
    expect(nextRetryDelay(schedule, 1, 60_000, () => 0.5)).toBe(60_000);
    expect(nextRetryDelay(schedule, 2, 1_000, () => 0.5)).toBe(300_000);
    expect(nextRetryDelay(schedule, 1, 7 * 86_400_000, () => 0.5)).toBe(86_400_000);
  });
});
