/** Integrations: the company's connections to other systems, a form to add one, a live check. */
import { useState } from 'preact/hooks';
import { api } from '../api';
import { Empty, ErrorNote, Field, Loading, PageHeader, useAction, useLoad, when } from '../ui';

interface Integration {
  id: string;
  name: string;
  type: string;
  is_active: boolean;
  created_at: string;
}

interface IntegrationType {
  type: string;
  name: string;
  description: string;
}

export function IntegrationsPage() {
  const data = useLoad(async (signal) => {
    const [list, types] = await Promise.all([
      api<{ data: Integration[] } | Integration[]>('/api/public/integrations?limit=100', { signal }),
      api<IntegrationType[]>('/api/public/integrations/types', { signal }),
    ]);
    return { integrations: Array.isArray(list) ? list : list.data, types };
  });
  const [checks, setChecks] = useState<Record<string, { ok: boolean; detail: string; latency_ms: number }>>({});
  const action = useAction();
  const check = (integration: Integration) =>
    void action.run(async () => {
      const result = await api<{ ok: boolean; detail: string; latency_ms: number }>(
        `/api/public/integrations/${integration.id}/test`,
        { method: 'POST' },
      );
      setChecks((previous) => ({ ...previous, [integration.id]: result }));
    });
  return (
    <section>
      <PageHeader title="Integrations" />
      {data.loading && !data.data ? <Loading what="integrations" /> : null}
      <ErrorNote error={data.error} />
      {data.data ? <CreateIntegration types={data.data.types} onCreated={data.reload} /> : null}
      <ErrorNote error={action.error} />
      {data.data && data.data.integrations.length === 0 ? (
        <Empty title="No integrations">
          <p>Connect Slack, Shopify, a mail server or your own API so that agents can act, then check it live.</p>
        </Empty>
      ) : null}
      <ul class="list">
        {data.data?.integrations.map((integration) => {
          const result = checks[integration.id];
          return (
            <li key={integration.id}>
              <div>
                <strong dir="auto">{integration.name}</strong>{' '}
                <span class="muted">
                  {integration.type} · {integration.is_active ? 'active' : 'inactive'} · {when(integration.created_at)}
                </span>
                {result ? (
                  <p role="status" class={result.ok ? 'ok' : 'error'}>
                    {result.ok ? 'Works' : 'Fails'}: {result.detail} ({result.latency_ms} ms)
                  </p>
                ) : null}
              </div>
              <button type="button" onClick={() => check(integration)} disabled={action.pending}>
                Check live
              </button>
            </li>
          );
        })}
      </ul>
    </section>
  );
}

function CreateIntegration({ types, onCreated }: { types: IntegrationType[]; onCreated: () => void }) {
  const [type, setType] = useState(types[0]?.type ?? '');
  const [name, setName] = useState('');
  const [config, setConfig] = useState('{}');
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(config);
      } catch {
        throw new Error('The configuration is not valid JSON');
      }
      await api('/api/public/integrations', { method: 'POST', body: { name, type, config: parsed } });
      setName('');
      setConfig('{}');
      onCreated();
    });
  };
  const chosen = types.find((t) => t.type === type);
  return (
    <form class="card form" onSubmit={submit} aria-label="Add an integration">
      <h2>Add an integration</h2>
      <div class="row">
        <Field label="Kind">
          <select value={type} onChange={(e) => setType(e.currentTarget.value)}>
            {types.map((t) => (
              <option key={t.type} value={t.type}>
                {t.name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Name">
          <input dir="auto" required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
      </div>
      {chosen ? <p class="muted">{chosen.description}</p> : null}
      <Field label="Configuration (JSON)" hint="Secrets are stored encrypted and never shown again.">
        <textarea rows={4} spellcheck={false} value={config} onInput={(e) => setConfig(e.currentTarget.value)} />
      </Field>
      <ErrorNote error={action.error} />
      <button type="submit" class="primary" disabled={action.pending}>
        {action.pending ? 'Adding…' : 'Add'}
      </button>
    </form>
  );
}
