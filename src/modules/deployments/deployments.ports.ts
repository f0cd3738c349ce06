/**
 * What the deployments module needs from other modules, narrowed to the calls it makes
 * (team notifications and knowledge-base readiness). The container passes the real services.
 */
import type { Executor } from '../../db/database.js';

export interface DeploymentNotification {
  companyId: string;
  senderId: string | null;
  notificationType: 'system';
  category: 'deployment';
  priority: 'low' | 'medium' | 'high' | 'urgent';
  title: string;
  message: string;
  metadata: Record<string, string>;
  actionUrl: string;
}

export interface DeploymentNotifier {
  /** Creates a team notification inside the caller's transaction. */
  notify(executor: Executor, input: DeploymentNotification): Promise<unknown>;
}

export interface CollectionsReadiness {
  /** Of these collection ids of the company: which are missing, still processing, or have failed documents. */
  collectionsReadiness(
    companyId: string,
    collectionIds: string[],
  ): Promise<{ missing: readonly string[]; processing: readonly string[]; failed: readonly string[] }>;
}

/** The outcome of an integration's live check (the integrations module's `POST …/test`). */
export interface IntegrationCheckResult {
  ok: boolean;
  /** What the check found, or why it failed (the vendor's words, secrets masked). */
  detail: string;
  latency_ms: number;
}

/** What a channel's roll-out needs to know of its integration (never a secret's value). */
export interface IntegrationFacts {
  name: string;
  type: string;
  is_active: boolean;
  /** Config keys holding a value (secrets that open included). */
  keys: readonly string[];
}

export interface IntegrationChecker {
  /** Runs the live check of one integration of the company; undefined when it does not exist. */
  checkIntegration(companyId: string, integrationId: string): Promise<IntegrationCheckResult | undefined>;
  /** The integration's kind, state and which config keys it holds; undefined when it does not exist. */
  integrationFacts?(companyId: string, integrationId: string): Promise<IntegrationFacts | undefined>;
}

/** A workflow as its roll-out checks it (the workflows module implements it). */
export interface DeployableWorkflow {
  id: string;
  name: string;
  default_agent_id: string;
  steps: readonly { name: string; agent_id: string }[];
}

export interface WorkflowSource {
  /** The company's workflow, or undefined. */
  find(companyId: string, workflowId: string): Promise<DeployableWorkflow | undefined>;
}
