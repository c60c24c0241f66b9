// /ui/jobs/run: a job file in, its plan (the `nomad job plan` diff and
// what the scheduler would do) shown, then submitted on confirmation.
import { h, replace, table, errorBox, section, jobHref } from '../dom.js';
import { send } from '../api.js';
import { failures } from '../failures.js';
import { diffView } from '../diff.js';
import { navigate } from '../app.js';

const EXAMPLE = `job "hello" {
  datacenters = ["*"]
  type        = "service"

  group "web" {
    count = 1

    task "server" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "while true; do echo hello; sleep 10; done"]
      }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
`;

function updatesTable(ann) {
  const rows = Object.entries(ann?.DesiredTGUpdates || {});
  const cols = ['Place', 'Stop', 'InPlaceUpdate', 'DestructiveUpdate', 'Canary', 'Migrate', 'Ignore', 'Preemptions'];
  return table([
    { label: 'Group', cell: ([g]) => g },
    ...cols.map((c) => ({ label: c.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase(), cell: ([, u]) => u[c] || 0, class: 'num' })),
  ], rows, { caption: 'What the scheduler would do', empty: 'No group changes.' });
}

export async function page(root, _params, ctx) {
  ctx.title('Run a job');
  const draft = sessionStorage.getItem('nomad.run.draft');
  const area = h('textarea', { id: 'job-hcl', name: 'hcl', rows: 22, spellcheck: 'false', autocomplete: 'off',
    'aria-describedby': 'hcl-help', value: draft || EXAMPLE });
  area.addEventListener('input', () => sessionStorage.setItem('nomad.run.draft', area.value));
  const out = h('div', { id: 'plan-out', 'aria-live': 'polite' });
  const planBtn = h('button', { type: 'submit', class: 'primary', id: 'plan-job' }, 'Plan');
  const form = h('form', { class: 'run-form' },
    h('label', { for: 'job-hcl' }, 'Job specification (HCL)'),
    h('p', { id: 'hcl-help', class: 'help' }, 'Planning shows what would change and where the scheduler would place it; nothing is submitted until you run it.'),
    area, h('div', { class: 'actions' }, planBtn));
  replace(root, h('p', { class: 'crumbs' }, h('a', { href: '/ui/jobs' }, 'Jobs'), ' / run'), h('h1', {}, 'Run a job'), form, out);

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    planBtn.disabled = true;
    replace(out, h('p', { class: 'loading' }, 'Planning…'));
    try {
      const job = await send('POST', '/v1/jobs/parse', { JobHCL: area.value, Canonicalize: true });
      const ns = job.Namespace || 'default';
      const plan = await send('POST', `/v1/job/${encodeURIComponent(job.ID)}/plan`, { Job: job, Diff: true }, { namespace: ns });
      const runBtn = h('button', { type: 'button', class: 'primary', id: 'run-job' }, `Run job ${job.ID}`);
      runBtn.addEventListener('click', async () => {
        runBtn.disabled = true;
        try {
          // The plan's index guards against a change made since the plan.
          await send('POST', '/v1/jobs', { Job: job, EnforceIndex: true, JobModifyIndex: plan.JobModifyIndex }, { namespace: ns });
          sessionStorage.removeItem('nomad.run.draft');
          navigate(jobHref(job.ID, ns));
        } catch (err) {
          runBtn.disabled = false;
          out.append(errorBox(err));
        }
      });
      replace(out,
        section('Plan',
          h('h3', {}, 'Changes to the job'), diffView(plan.Diff),
          h('h3', {}, 'Scheduler'), updatesTable(plan.Annotations),
          plan.FailedTGAllocs ? [h('h3', {}, 'Placement would fail'), failures(plan.FailedTGAllocs)] : h('p', { class: 'ok-text' }, 'All allocations can be placed.'),
          plan.Warnings ? h('p', { class: 'warn-text' }, plan.Warnings) : null,
          h('div', { class: 'actions' }, runBtn,
            h('button', { type: 'button', onclick: () => { replace(out); area.focus(); } }, 'Edit'))));
      out.querySelector('h2')?.setAttribute('tabindex', '-1');
      out.querySelector('h2')?.focus();
    } catch (err) {
      replace(out, errorBox(err));
    } finally {
      planBtn.disabled = false;
    }
  });
}
