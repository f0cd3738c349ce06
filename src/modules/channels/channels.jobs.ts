/** Background jobs of the channels module, defined on the queue by the container. */
import type { TaskJobDefinition } from '../../jobs/queue.js';
import { ANSWER_JOB, type AnswerJob } from './channels.answer.js';
import type { EventRow } from './channels.repo.js';
import type { ChannelsService } from './channels.service.js';

/**
 * Answering is a task job: a worker takes the thread's next event when it fetches the job (its
 * id on the event row); a dead worker's events are handed back by the queue's sweep.
 */
export function channelJobs(channels: Pick<ChannelsService, 'answerTask'>): TaskJobDefinition<AnswerJob, EventRow>[] {
  const task = channels.answerTask;
  return [
    {
      name: ANSWER_JOB,
      claim: task.claim,
      run: task.run,
      requeue: task.requeue,
      release: task.release,
      concurrency: 4,
      pollingIntervalSeconds: 0.5,
    },
  ];
}
