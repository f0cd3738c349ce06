/** Insights: the dashboard's figures, queries over time (uPlot), stats, recent support queries. */
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { api, query } from '../api';
import { Empty, ErrorNote, Field, Loading, PageHeader, useLoad, when } from '../ui';

interface Dashboard {
  total_queries: number;
  open_queries: number;
  resolved_queries: number;
  avg_resolution_time: number;
  agent_success_rate: number;
  human_escalated_queries: number;
  avg_customer_satisfaction: number | null;
  recent_queries: { id: string; subject: string; status: string; priority: string; created_at: string }[];
  top_performing_agents: { agent_id: string; agent_name: string; queries_handled: number; success_rate: number }[];
}

interface Analytics {
  time_series: { date: string; queries_created: number; queries_resolved: number }[];
  trends: { query_volume_trend: string; resolution_time_trend: string };
  top_categories: { category: string; count: number; percentage: number }[];
}

interface Stats {
  by_type: Record<string, number>;
  by_priority: Record<string, number>;
}

const round = (value: number | null | undefined, digits = 1) =>
  value === null || value === undefined ? '—' : value.toFixed(digits);

export function InsightsPage() {
  const [days, setDays] = useState(30);
  const insights = useLoad(
    async (signal) => {
      const start_date = new Date(Date.now() - days * 86_400_000).toISOString();
      const range = query({ start_date });
      const [dashboard, analytics, stats] = await Promise.all([
        api<Dashboard>(`/customer-support/dashboard${range}`, { signal }),
        api<Analytics>(`/customer-support/analytics${query({ start_date, granularity: days > 90 ? 'week' : 'day' })}`, {
          signal,
        }),
        api<Stats>(`/customer-support/stats${range}`, { signal }),
      ]);
      return { dashboard, analytics, stats };
    },
    [days],
  );
  const data = insights.data;
  return (
    <section>
      <PageHeader title="Insights">
        <Field label="Period">
          <select value={days} onChange={(e) => setDays(Number(e.currentTarget.value))}>
            <option value={7}>Last 7 days</option>
            <option value={30}>Last 30 days</option>
            <option value={90}>Last 90 days</option>
            <option value={365}>Last year</option>
          </select>
        </Field>
      </PageHeader>
      {insights.loading && !data ? <Loading what="insights" /> : null}
      <ErrorNote error={insights.error} />
      {data && data.dashboard.total_queries === 0 ? (
        <Empty title="No support queries in this period">
          <p>
            Queries appear here once customers chat with a <a href="#/deployments">deployed agent</a>.
          </p>
        </Empty>
      ) : null}
      {data ? (
        <>
          <ul class="cards" aria-label="Figures">
            <Figure label="Queries" value={String(data.dashboard.total_queries)} />
            <Figure label="Open" value={String(data.dashboard.open_queries)} />
            <Figure label="Resolved" value={String(data.dashboard.resolved_queries)} />
            <Figure label="Agent success rate" value={`${round(data.dashboard.agent_success_rate)} %`} />
            <Figure label="Escalated to people" value={String(data.dashboard.human_escalated_queries)} />
            <Figure label="Mean resolution" value={`${round(data.dashboard.avg_resolution_time)} min`} />
          </ul>
          <section class="card" aria-labelledby="chart-title">
            <h2 id="chart-title">Queries over time</h2>
            <p class="muted">
              Volume {data.analytics.trends.query_volume_trend}; resolution time{' '}
              {data.analytics.trends.resolution_time_trend}.
            </p>
            <Chart series={data.analytics.time_series} />
          </section>
          <div class="grid-2">
            <Breakdown title="By type" values={data.stats.by_type} />
            <Breakdown title="By priority" values={data.stats.by_priority} />
          </div>
          <section class="card" aria-labelledby="recent-title">
            <h2 id="recent-title">Recent queries</h2>
            {data.dashboard.recent_queries.length === 0 ? <p>None yet.</p> : null}
            <ul class="list">
              {data.dashboard.recent_queries.map((q) => (
                <li key={q.id}>
                  <span dir="auto">{q.subject}</span>
                  <span class="muted">
                    <span class={`badge ${q.status}`}>{q.status}</span> {q.priority} · {when(q.created_at)}
                  </span>
                </li>
              ))}
            </ul>
          </section>
        </>
      ) : null}
    </section>
  );
}

function Figure({ label, value }: { label: string; value: string }) {
  return (
    <li class="figure card">
      <span class="figure-value">{value}</span>
      <span class="figure-label">{label}</span>
    </li>
  );
}

function Breakdown({ title, values }: { title: string; values: Record<string, number> }) {
  const total = Object.values(values).reduce((sum, value) => sum + value, 0);
  return (
    <section class="card">
      <h2>{title}</h2>
      <table>
        <thead>
          <tr>
            <th scope="col">{title.replace('By ', '')}</th>
            <th scope="col">Queries</th>
            <th scope="col">Share</th>
          </tr>
        </thead>
        <tbody>
          {Object.entries(values).map(([name, count]) => (
            <tr key={name}>
              <td>{name.replace(/_/g, ' ')}</td>
              <td>{count}</td>
              <td>{total ? `${Math.round((count / total) * 100)} %` : '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function Chart({ series }: { series: Analytics['time_series'] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element || series.length === 0) return;
    const x = series.map((point) => Date.parse(`${point.date}T00:00:00Z`) / 1000);
    const plot = new uPlot(
      {
        width: Math.max(280, element.clientWidth),
        height: 240,
        series: [
          {},
          { label: 'Created', stroke: '#1d4ed8', width: 2 },
          { label: 'Resolved', stroke: '#047857', width: 2 },
        ],
        axes: [{}, { label: 'Queries' }],
      },
      [x, series.map((p) => p.queries_created), series.map((p) => p.queries_resolved)],
      element,
    );
    const observer = new ResizeObserver(() => plot.setSize({ width: Math.max(280, element.clientWidth), height: 240 }));
    observer.observe(element);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [series]);
  if (series.length === 0) return <p>No data in this period.</p>;
  return (
    <div
      ref={box}
      class="chart"
      role="img"
      aria-label={`Queries created and resolved per day, ${series.length} points`}
    />
  );
}
