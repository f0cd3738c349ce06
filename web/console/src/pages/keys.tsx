/** The caller's API keys and the company's chat tokens: secrets shown once, at creation. */
import { useState } from 'preact/hooks';
import { api, type Page } from '../api';
import { ErrorNote, Field, Loading, PageHeader, useAction, useLoad, when } from '../ui';

interface Credential {
  id: string;
  name: string;
  hint: string;
  agent_id?: string | null;
  created_at: string;
}

export function KeysPage() {
  return (
    <section>
      <PageHeader title="API keys & chat tokens" />
      <div class="grid-2">
        <Credentials
          title="Your API keys"
          path="/api/public/api-keys"
          secretField="key"
          explain="Scripts send a key as x-api-key; it acts as you, in your active company."
        />
        <Credentials
          title="Chat tokens"
          path="/api/public/chat-tokens"
          secretField="token"
          explain="Your website or app sends a token as x-api-token to chat with your deployed agents."
        />
      </div>
    </section>
  );
}

function Credentials(props: { title: string; path: string; secretField: 'key' | 'token'; explain: string }) {
  const list = useLoad((signal) => api<Page<Credential>>(`${props.path}?limit=100`, { signal }));
  const [name, setName] = useState('');
  const [secret, setSecret] = useState<string | null>(null);
  const action = useAction();
  const create = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const created = await api<Record<string, string>>(props.path, { method: 'POST', body: { name } });
      setSecret(created[props.secretField] ?? null);
      setName('');
      list.reload();
    });
  };
  const revoke = (credential: Credential) =>
    void action.run(async () => {
      if (!confirm(`Revoke “${credential.name || credential.hint}”? Requests with it are refused at once.`)) return;
      await api(`${props.path}/${credential.id}`, { method: 'DELETE' });
      list.reload();
    });
  return (
    <section class="card" aria-label={props.title}>
      <h2>{props.title}</h2>
      <p class="muted">{props.explain}</p>
      {list.loading && !list.data ? <Loading what={props.title.toLowerCase()} /> : null}
      <ErrorNote error={list.error ?? action.error} />
      {secret ? (
        <div class="secret" role="status">
          <p>Copy it now: it is not shown again.</p>
          <code>{secret}</code>
          <button type="button" onClick={() => void navigator.clipboard?.writeText(secret)}>
            Copy
          </button>
        </div>
      ) : null}
      <ul class="list">
        {list.data?.data.map((credential) => (
          <li key={credential.id}>
            <span>
              <span dir="auto">{credential.name || 'unnamed'}</span> <code>{credential.hint}</code>{' '}
              <span class="muted">{when(credential.created_at)}</span>
            </span>
            <button
              type="button"
              class="danger"
              onClick={() => revoke(credential)}
              aria-label={`Revoke ${credential.name || credential.hint}`}
            >
              Revoke
            </button>
          </li>
        ))}
      </ul>
      <form class="form inline-form" onSubmit={create}>
        <Field label="Name">
          <input dir="auto" maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <button type="submit" class="primary" disabled={action.pending}>
          Create
        </button>
      </form>
    </section>
  );
}
