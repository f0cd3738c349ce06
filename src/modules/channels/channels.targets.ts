/**
 * What every inbound request and every answer of a channel reads first: the deployment the route
 * names and its integration's config (secrets in clear: never returned, logged or cached beyond
 * this process). Kept in a short-lived coherent cache when one is given — cleared on every
 * instance by `switchboard_serving_changed`, which deployments (migration 0041) and integrations
 * (migration 0245) send on every change, and on this instance at once by the services that make
 * a change — so the acknowledgement and the answer skip two reads.
 */
import type { CoherentCache } from '../../lib/coherent-cache.js';
import type { ChannelDeployment } from '../deployments/index.js';

export interface OpenIntegration {
  type: string;
  is_active: boolean;
  config: Record<string, unknown>;
}

export interface ChannelTarget {
  deployment: ChannelDeployment;
  /** The integration the deployment names, if it exists (its type is checked by the caller). */
  integration: OpenIntegration | undefined;
}

export interface TargetSources {
  deployments: { forChannel(id: string): Promise<ChannelDeployment | undefined> };
  integrations: { openConfig(companyId: string, id: string): Promise<OpenIntegration | undefined> };
}

/** The deployment and its integration, from the cache when present (an unknown deployment is never cached). */
export function createTargets(sources: TargetSources, cache: CoherentCache<ChannelTarget> | null | undefined) {
  return async function target(deploymentId: string): Promise<ChannelTarget | undefined> {
    const hit = cache?.get(deploymentId);
    if (hit) return hit;
    const generation = cache?.generation ?? 0;
    const deployment = await sources.deployments.forChannel(deploymentId);
    if (!deployment) return undefined;
    const integration = deployment.integration_id
      ? await sources.integrations.openConfig(deployment.company_id, deployment.integration_id)
      : undefined;
    const found = { deployment, integration };
    cache?.set(deploymentId, found, generation);
    return found;
  };
}

export type Targets = ReturnType<typeof createTargets>;
