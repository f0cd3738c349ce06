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
