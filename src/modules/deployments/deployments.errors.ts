/** Errors of the deployments family (rendered as `{detail, status_code}`). */
import { AppError, AppErrors } from '../../http/errors.js';
import type { DeploymentAction, DeploymentStatus } from './deployment-state.js';

export const DeploymentErrors = {
  notFound: (id: string) => AppErrors.notFound('Deployment', id),
  invalidField: (field: string, problem: string) =>
    new AppError(400, `Invalid field '${field}': ${problem}`, 'ValidationError'),
  invalidTransition: (current: DeploymentStatus, action: DeploymentAction, allowedFrom: readonly DeploymentStatus[]) =>
    AppErrors.conflict(
      `Cannot ${action} a deployment whose status is ${current}; ${action} applies to ${allowedFrom.join(', ')} deployments`,
    ),
  deployingNoUpdate: () =>
    AppErrors.conflict(
      'Cannot update a deployment whose status is deploying; wait for the roll-out to finish or stop it first',
    ),
  liveConflict: (
    otherId: string,
    otherStatus: DeploymentStatus,
    deployable: 'agent' | 'workflow',
    channel: string,
    region: string,
  ) =>
    AppErrors.conflict(
      `Deployment ${otherId} of this ${deployable} is already ${otherStatus} on channel ${channel} in region ${region}; stop it first`,
    ),
  noActiveDeployment: (agentId: string, channel: string, region: string) =>
    new AppError(404, `No active deployment for agent ${agentId} on channel ${channel} in region ${region}`),
  notServing: (id: string, status: DeploymentStatus) =>
    AppErrors.conflict(
      `Deployment ${id} is ${status}${status === 'paused' ? '; resume it to serve chats' : '; it serves chats once active'}`,
    ),
};
