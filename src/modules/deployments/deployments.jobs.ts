/** Background jobs of the deployments module, defined on the queue by the container. */
import type { TaskJobDefinition } from '../../jobs/queue.js';
import type { DeploymentRow } from './deployments.repo.js';
import { ROLLOUT_JOB, type RolloutJob } from './deployments.rollout.js';
import type { DeploymentsService } from './deployments.service.js';

/**
 * The roll-out is a task job: a worker takes the attempt when it fetches the job (its id on the
 * deployment row), and a dead worker's attempt is handed back by the queue's sweep.
 */
export function deploymentJobs(
  deployments: Pick<DeploymentsService, 'rolloutTask'>,
): TaskJobDefinition<RolloutJob, DeploymentRow>[] {
  return [{ name: ROLLOUT_JOB, ...deployments.rolloutTask, concurrency: 2, pollingIntervalSeconds: 0.5 }];
}
