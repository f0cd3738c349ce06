/** Table types of the deployments module (migrations/0030_create_deployments.sql). */
import type { Generated } from 'kysely';
import type { DefaultTimestamp } from '../../db/columns.js';
import type { DeploymentStatus } from './deployment-state.js';

export type LogLevel = 'info' | 'warning' | 'error';

export interface DeploymentsTable {
  id: Generated<string>;
  company_id: string;
  user_id: string | null;
  deployable_type: 'agent' | 'workflow';
  deployable_id: string;
  agent_id: string;
  channel: string;
  region_id: string;
  languages: Generated<string>;
  status: Generated<DeploymentStatus>;
  config: Generated<string>;
  error: string | null;
  rollout_attempt: Generated<number>;
  started_by: string | null;
  /** The worker process (job_workers.id) running the roll-out, and the attempt it took. */
  rollout_worker_id: number | null;
  rollout_claimed_attempt: number | null;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface DeploymentLogsTable {
  id: Generated<number>;
  deployment_id: string;
  level: LogLevel;
  message: string;
  created_at: DefaultTimestamp;
}

export interface DeploymentsTables {
  deployments: DeploymentsTable;
  deployment_logs: DeploymentLogsTable;
}
