import { describe, expect, it } from 'vitest';
import {
  canUpdate,
  DEPLOYMENT_STATUSES,
  transition,
  type DeploymentAction,
  type DeploymentStatus,
} from './deployment-state.js';

// Every (status, action) pair: the expected next status, or null when the move is forbidden.
const TABLE: Record<DeploymentAction, Partial<Record<DeploymentStatus, DeploymentStatus>>> = {
  start: { pending: 'deploying', failed: 'deploying', cancelled: 'deploying' },
  stop: { deploying: 'cancelled', active: 'cancelled', paused: 'cancelled' },
  pause: { active: 'paused' },
  resume: { paused: 'active' },
  succeed: { deploying: 'active' },
  fail: { deploying: 'failed' },
};

const cases = Object.entries(TABLE).flatMap(([action, moves]) =>
  DEPLOYMENT_STATUSES.map((from) => ({ action: action as DeploymentAction, from, to: moves[from] ?? null })),
);

describe('deployment state machine', () => {
  it.each(cases)('$action from $from → $to', ({ action, from, to }) => {
    const result = transition(from, action);
    if (to === null) {
      expect(result.allowed).toBe(false);
      if (!result.allowed) {
        expect(result.from).toBe(from);
        expect(result.allowedFrom).not.toContain(from);
        expect(result.allowedFrom.length).toBeGreaterThan(0);
      }
    } else {
      expect(result).toEqual({ allowed: true, from, to });
    }
  });

  it('covers all 36 pairs', () => {
    expect(cases).toHaveLength(36);
  });

  it.each(DEPLOYMENT_STATUSES.map((status) => ({ status, ok: status !== 'deploying' })))(
    'updates are allowed from $status: $ok',
    ({ status, ok }) => expect(canUpdate(status)).toBe(ok),
  );
});
