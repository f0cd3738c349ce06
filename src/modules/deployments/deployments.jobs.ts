/** Background jobs of the deployments module, defined on the queue by the container. */
import type { JobDefinition } from '../../jobs/queue.js';
import { ROLLOUT_JOB, type RolloutJob } from './deployments.rollout.js';
import type { DeploymentsService } from './deployments.service.js';

export function deploymentJobs(deployments: Pick<DeploymentsService, 'runRollout'>): JobDefinition<RolloutJob>[] {
  return [
    {
      name: ROLLOUT_JOB,
      handler: (data) => deployments.runRollout(data),
      concurrency: 2,
      pollingIntervalSeconds: 0.5,
      retryLimit: 2,
      expireInSeconds: 5 * 60,
    },
  ];
}
