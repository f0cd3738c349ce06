/** Kysely types of the workflows table (migrations/0080_create_workflows.sql). */
import type { ColumnType, Generated } from 'kysely';
import type { DefaultTimestamp } from '../../db/columns.js';

/** One step of a workflow: the agent that answers and when it applies. */
export interface WorkflowStep {
  name: string;
  agent_id: string;
  when: {
    /** Support query types (support-queries classifier) this step answers. */
    query_types: string[];
    /** Words or phrases that select this step, matched case-insensitively. */
    keywords: string[];
    /** ISO 639 codes of the questions it answers (empty: any). */
    languages: string[];
  };
}

export interface WorkflowsTable {
  id: Generated<string>;
  company_id: string;
  name: string;
  description: Generated<string>;
  steps: ColumnType<WorkflowStep[], string, string>;
  default_agent_id: string;
  router: Generated<string>;
  created_by: string | null;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface WorkflowsTables {
  workflows: WorkflowsTable;
}
