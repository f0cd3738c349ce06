/**
 * The deployment state machine (DESIGN §6), pure: which action moves which status where.
 * The service applies it under a row lock; the roll-out job uses `succeed` and `fail`.
 */
export const DEPLOYMENT_STATUSES = ['pending', 'deploying', 'active', 'failed', 'cancelled', 'paused'] as const;
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number];

/** Actions a caller may take through the control endpoints. */
export const CONTROL_ACTIONS = ['start', 'stop', 'pause', 'resume'] as const;
export type ControlAction = (typeof CONTROL_ACTIONS)[number];
/** Actions only the roll-out job takes. */
export type RolloutAction = 'succeed' | 'fail';
export type DeploymentAction = ControlAction | RolloutAction;

const TRANSITIONS: Record<DeploymentAction, { from: readonly DeploymentStatus[]; to: DeploymentStatus }> = {
  start: { from: ['pending', 'failed', 'cancelled'], to: 'deploying' },
  stop: { from: ['deploying', 'active', 'paused'], to: 'cancelled' },
  pause: { from: ['active'], to: 'paused' },
  resume: { from: ['paused'], to: 'active' },
  succeed: { from: ['deploying'], to: 'active' },
  fail: { from: ['deploying'], to: 'failed' },
};

export type TransitionResult =
  | { allowed: true; from: DeploymentStatus; to: DeploymentStatus }
  | { allowed: false; from: DeploymentStatus; allowedFrom: readonly DeploymentStatus[] };

export function transition(current: DeploymentStatus, action: DeploymentAction): TransitionResult {
  const rule = TRANSITIONS[action];
  return rule.from.includes(current)
    ? { allowed: true, from: current, to: rule.to }
    : { allowed: false, from: current, allowedFrom: rule.from };
}

/** Statuses in which a deployment holds its agent, channel and region (one at a time). */
export const LIVE_STATUSES = ['deploying', 'active', 'paused'] as const satisfies readonly DeploymentStatus[];

export function isLive(status: DeploymentStatus): boolean {
  return (LIVE_STATUSES as readonly DeploymentStatus[]).includes(status);
}

/** A roll-out is checking the current settings while deploying: updates wait until it ends. */
export function canUpdate(status: DeploymentStatus): boolean {
  return status !== 'deploying';
}

/** Past participles for logs and notifications: "Deployment started", "… paused". */
export const ACTION_WORDS: Record<DeploymentAction, string> = {
  start: 'started',
  stop: 'stopped',
  pause: 'paused',
  resume: 'resumed',
  succeed: 'is active',
  fail: 'failed',
};
