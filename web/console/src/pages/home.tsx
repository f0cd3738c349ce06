/** Getting started: what a new company does next (upload knowledge → create an agent → deploy). */
import { api, type Page } from '../api';
import { ErrorNote, Loading, PageHeader, useLoad } from '../ui';

export function HomePage() {
  const counts = useLoad(async (signal) => {
    const [documents, agents, deployments] = await Promise.all([
      api<Page<unknown>>('/api/public/documents/list', { method: 'POST', body: { limit: 1 }, signal }),
      api<Page<unknown>>('/api/public/agents?limit=1', { signal }),
      api<Page<{ status: string }>>('/api/public/deployments?limit=100', { signal }),
    ]);
    return {
      documents: documents.total,
      agents: agents.total,
      live: deployments.data.filter((d) => d.status === 'active').length,
    };
  });
  const steps = counts.data
    ? [
        {
          done: counts.data.documents > 0,
          title: 'Upload knowledge',
          text: 'Add the documents your agents answer from.',
          href: '#/knowledge',
          action: 'Upload a document',
        },
        {
          done: counts.data.agents > 0,
          title: 'Create an agent',
          text: 'Give it instructions and your knowledge.',
          href: '#/agents',
          action: 'Create an agent',
        },
        {
          done: counts.data.live > 0,
          title: 'Deploy it',
          text: 'Put it live on a channel, then try it.',
          href: '#/deployments',
          action: 'Deploy an agent',
        },
      ]
    : [];
  return (
    <section>
      <PageHeader title="Getting started" />
      {counts.loading && !counts.data ? <Loading what="your company" /> : null}
      <ErrorNote error={counts.error} />
      <ol class="steps">
        {steps.map((step, index) => (
          <li key={step.title} class={step.done ? 'step done' : 'step'}>
            <span class="step-number" aria-hidden="true">
              {step.done ? '✓' : index + 1}
            </span>
            <div>
              <h2>
                {step.title}
                {step.done ? <span class="badge ok">done</span> : null}
              </h2>
              <p>{step.text}</p>
              {!step.done ? (
                <a class="button primary" href={step.href}>
                  {step.action}
                </a>
              ) : null}
            </div>
          </li>
        ))}
      </ol>
      {counts.data && counts.data.live > 0 ? (
        <p>
          Your agents are live. See how they do in <a href="#/insights">Insights</a>.
        </p>
      ) : null}
    </section>
  );
}
