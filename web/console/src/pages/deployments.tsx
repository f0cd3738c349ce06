/** Deployments: put an agent live on a channel and region, start/stop/pause/resume, read the logs. */
import { useEffect, useState } from 'preact/hooks';
import { api, type Page } from '../api';
import { Empty, ErrorNote, Field, Loading, PageHeader, useAction, useLoad, useRoute, when } from '../ui';
import type { Agent } from './agents';
import { WidgetPanel } from './widget-preview';

interface Deployment {
  id: string;
  deployable_type: 'agent' | 'workflow';
  deployable_id: string;
  channel: string;
  region_id: string;
  status: string;
  error: string | null;
  agent_key: string;
  created_at: string;
}

interface Region {
  id: string;
  name: string;
  slug: string;
}

/** The actions each status allows (the deployments state machine). */
const ACTIONS: Record<string, ('start' | 'stop' | 'pause' | 'resume')[]> = {
  pending: ['start'],
  deploying: ['stop'],
  active: ['pause', 'stop'],
  paused: ['resume', 'stop'],
  failed: ['start'],
  cancelled: ['start'],
};

export function DeploymentsPage({ selected }: { selected?: string }) {
  const route = useRoute();
  const data = useLoad(async (signal) => {
    const [deployments, agents, regions] = await Promise.all([
      api<Page<Deployment>>('/api/public/deployments?limit=100', { signal }),
      api<Page<Agent>>('/api/public/agents?limit=100', { signal }),
      api<Page<Region>>('/api/public/regions', { signal }),
    ]);
    return { deployments: deployments.data, agents: agents.data, regions: regions.data };
  });
  const [logsOf, setLogsOf] = useState<string | null>(selected ?? null);
  const [widgetOf, setWidgetOf] = useState<string | null>(null);
  const widgetDeployment = data.data?.deployments.find((d) => d.id === widgetOf);
  // While a roll-out runs, look again every second and a half.
  const rolling = data.data?.deployments.some((d) => d.status === 'deploying') ?? false;
  useEffect(() => {
    if (!rolling) return;
    const timer = setTimeout(data.reload, 1500);
    return () => clearTimeout(timer);
  }, [rolling, data.data, data.reload]);
  const action = useAction();
  const act = (deployment: Deployment, verb: string) =>
    void action.run(async () => {
      await api(`/api/public/deployments/${deployment.id}/${verb}`, { method: 'POST' });
      data.reload();
    });
  const nameOf = (id: string) => data.data?.agents.find((a) => a.id === id)?.title ?? id;
  return (
    <section>
      <PageHeader title="Deployments" />
      {data.loading && !data.data ? <Loading what="deployments" /> : null}
      <ErrorNote error={data.error} />
      {data.data ? (
        <CreateDeployment
          agents={data.data.agents}
          regions={data.data.regions}
          initialAgent={route.params.get('agent') ?? ''}
          onCreated={data.reload}
        />
      ) : null}
      <ErrorNote error={action.error} />
      {data.data && data.data.deployments.length === 0 ? (
        <Empty title="Nothing deployed yet">
          <p>Choose an agent above and deploy it on the web channel; then chat with it from its page.</p>
        </Empty>
      ) : null}
      {data.data && data.data.deployments.length > 0 ? (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Deployments</caption>
            <thead>
              <tr>
                <th scope="col">Agent</th>
                <th scope="col">Channel</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {data.data.deployments.map((deployment) => (
                <tr key={deployment.id}>
                  <td dir="auto">{nameOf(deployment.deployable_id)}</td>
                  <td>{deployment.channel}</td>
                  <td>
                    <span class={`badge ${deployment.status}`}>{deployment.status}</span>
                    {deployment.error ? <span class="error-inline"> {deployment.error}</span> : null}
                  </td>
                  <td>{when(deployment.created_at)}</td>
                  <td class="actions">
                    {(ACTIONS[deployment.status] ?? []).map((verb) => (
                      <button key={verb} type="button" onClick={() => act(deployment, verb)} disabled={action.pending}>
                        {verb[0]!.toUpperCase() + verb.slice(1)}
                      </button>
                    ))}
                    <button type="button" class="secondary" onClick={() => setLogsOf(deployment.id)}>
                      Logs
                    </button>
                    {deployment.channel === 'web' ? (
                      <button
                        type="button"
                        class="secondary"
                        aria-label={`Widget of ${nameOf(deployment.deployable_id)}`}
                        onClick={() => setWidgetOf(deployment.id)}
                      >
                        Widget
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {widgetDeployment ? (
        <WidgetPanel
          deploymentId={widgetDeployment.id}
          status={widgetDeployment.status}
          onClose={() => setWidgetOf(null)}
        />
      ) : null}
      {logsOf ? <Logs deploymentId={logsOf} onClose={() => setLogsOf(null)} /> : null}
    </section>
  );
}

function CreateDeployment(props: { agents: Agent[]; regions: Region[]; initialAgent: string; onCreated: () => void }) {
  const [agentId, setAgentId] = useState(props.initialAgent || props.agents[0]?.id || '');
  const [channel, setChannel] = useState('web');
  const [regionId, setRegionId] = useState(props.regions[0]?.id ?? '');
  const action = useAction();
  if (props.agents.length === 0) {
    return (
      <Empty title="No agent to deploy">
        <p>
          <a href="#/agents">Create an agent</a> first.
        </p>
      </Empty>
    );
  }
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const created = await api<Deployment>('/api/public/deployments', {
        method: 'POST',
        body: { deployable_type: 'agent', deployable_id: agentId, channel, region_id: regionId },
      });
      if (created.status === 'pending') await api(`/api/public/deployments/${created.id}/start`, { method: 'POST' });
      props.onCreated();
    });
  };
  return (
    <form class="card form inline-form" onSubmit={submit} aria-label="Deploy an agent">
      <h2>Deploy an agent</h2>
      <div class="row">
        <Field label="Agent">
          <select value={agentId} onChange={(e) => setAgentId(e.currentTarget.value)}>
            {props.agents.map((agent) => (
              <option key={agent.id} value={agent.id} dir="auto">
                {agent.title}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Channel">
          <input
            value={channel}
            required
            pattern="[a-z][a-z0-9_-]*"
            onInput={(e) => setChannel(e.currentTarget.value)}
          />
        </Field>
        <Field label="Region">
          <select value={regionId} onChange={(e) => setRegionId(e.currentTarget.value)}>
            {props.regions.map((region) => (
              <option key={region.id} value={region.id}>
                {region.name}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <ErrorNote error={action.error} />
      <button type="submit" class="primary" disabled={action.pending}>
        {action.pending ? 'Deploying…' : 'Deploy'}
      </button>
    </form>
  );
}

function Logs({ deploymentId, onClose }: { deploymentId: string; onClose: () => void }) {
  const logs = useLoad(
    (signal) =>
      api<{ logs: { timestamp: string; level: string; message: string }[] }>(
        `/api/public/deployments/${deploymentId}/logs?limit=200`,
        { signal },
      ),
    [deploymentId],
  );
  return (
    <section class="card" aria-label="Deployment logs">
      <header class="detail-header">
        <h2>Logs</h2>
        <div class="page-actions">
          <button type="button" onClick={logs.reload}>
            Refresh
          </button>
          <button type="button" onClick={onClose}>
            Close
          </button>
        </div>
      </header>
      {logs.loading && !logs.data ? <Loading what="logs" /> : null}
      <ErrorNote error={logs.error} />
      {logs.data && logs.data.logs.length === 0 ? <p>No log lines yet.</p> : null}
      <ol class="logs">
        {logs.data?.logs.map((line, index) => (
          <li key={index} class={`log ${line.level}`}>
            <time>{when(line.timestamp)}</time> <span class="badge">{line.level}</span>{' '}
            <span dir="auto">{line.message}</span>
          </li>
        ))}
      </ol>
    </section>
  );
}
