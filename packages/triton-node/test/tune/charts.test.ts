/**
 * The tune and bench charts, rendered in headless Chromium: every label
 * inside the picture and none over another (measured in the browser, on the
 * laid-out text), and a screenshot of each. The charts come from recorded
 * results (docs/bench/*.json) and, for a tune run that finds nothing within
 * its SLA, from a run here (on the library under test). With CHART_IMAGES=1 the
 * screenshots are written to docs/images (committed; the tune charts' SVGs
 * beside them, for docs/tuning.md); else to a scratch folder. Skipped without
 * Chromium (`apt-get install chromium`, or CHROMIUM pointing at one): CI does
 * not install it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { serverOptions, skipAllIf } from '@triton-node/test-support/helpers.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CaseSummary, libraryLabel, renderChart } from '../../../../bench/report.js';
import type { Side } from '../../../../bench/results.js';
import { Server, type TuneResult, tune } from '../../lib/index.js';
import { tuneChartSvg } from '../../lib/tune/report.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
const scratch = mkdtempSync(join(tmpdir(), 'triton-node-charts-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const imageDir = process.env.CHART_IMAGES === '1' ? join(ROOT, '../../docs', 'images') : scratch;

interface Layout {
  width: number;
  height: number;
  texts: number;
  outside: string[];
  overlaps: string[];
}

/**
 * The page that measures the chart: every <text> laid out, its box checked
 * against the picture and against every other text's box (a pixel of slack:
 * neighbouring glyph boxes touch).
 */
function page(svg: string): string {
  const measure = `
const svg = document.querySelector('svg');
const frame = svg.getBoundingClientRect();
const boxes = [...svg.querySelectorAll('text')]
  .filter((t) => t.textContent.trim() !== '')
  .map((t) => ({ text: t.textContent.trim(), r: t.getBoundingClientRect() }))
  .filter((b) => b.r.width > 0);
const outside = boxes
  .filter((b) => b.r.left < frame.left - 1 || b.r.right > frame.right + 1 || b.r.top < frame.top - 1 || b.r.bottom > frame.bottom + 1)
  .map((b) => b.text);
const overlaps = [];
for (let i = 0; i < boxes.length; i++)
  for (let j = i + 1; j < boxes.length; j++) {
    const a = boxes[i].r, b = boxes[j].r;
    const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
    const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
    if (w > 1 && h > 1) overlaps.push(boxes[i].text + ' / ' + boxes[j].text);
  }
document.getElementById('layout').textContent = JSON.stringify({ width: frame.width, height: frame.height, texts: boxes.length, outside, overlaps });`;
  return `<!doctype html><html><head><meta charset="utf-8"><style>body{margin:0;background:white}</style></head><body>${svg}<pre id="layout" style="display:none"></pre><script>${measure}</script></body></html>`;
}

/** Lays the chart out in Chromium: its measurements, and a screenshot at `image`. */
function render(name: string, svg: string, keepSvg = false): Layout & { image: string } {
  const html = join(scratch, `${name}.html`);
  writeFileSync(html, page(svg));
  // The tune charts' SVGs go beside docs/tuning.md, which the package ships (docs/images/*.svg).
  if (keepSvg && imageDir !== scratch) writeFileSync(join(imageDir, `${name}.svg`), `${svg}\n`);
  const url = pathToFileURL(html).href;
  const dom = spawnSync(CHROMIUM, [...FLAGS, '--dump-dom', url], { encoding: 'utf8', timeout: 60_000 });
  const json = /<pre id="layout"[^>]*>([^<]*)<\/pre>/.exec(dom.stdout)?.[1];
  if (json === undefined) throw new Error(`chromium laid out nothing for ${name}: ${dom.stderr.slice(-500)}`);
  const layout = JSON.parse(json.replaceAll('&quot;', '"').replaceAll('&amp;', '&')) as Layout;
  const image = join(imageDir, `${name}.png`);
  const size = `--window-size=${Math.ceil(layout.width)},${Math.ceil(layout.height)}`;
  const shot = spawnSync(CHROMIUM, [...FLAGS, '--hide-scrollbars', `--screenshot=${image}`, size, url], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (!existsSync(image)) throw new Error(`no screenshot of ${name}: ${shot.stderr.slice(-500)}`);
  return { ...layout, image };
}

/** Width and height from a PNG's IHDR. */
function pngSize(file: string): [number, number] {
  const b = readFileSync(file);
  expect(b.subarray(1, 4).toString('latin1')).toBe('PNG');
  return [b.readUInt32BE(16), b.readUInt32BE(20)];
}

function expectReadable(layout: Layout & { image: string }): void {
  expect(layout.texts).toBeGreaterThan(5);
  expect(layout.outside).toEqual([]);
  expect(layout.overlaps).toEqual([]);
  expect(pngSize(layout.image)).toEqual([Math.ceil(layout.width), Math.ceil(layout.height)]);
}

const record = <T>(file: string): T =>
  JSON.parse(readFileSync(join(ROOT, '../../docs', 'bench', file), 'utf8')) as T;

describe('the tune chart in Chromium', () => {
  skipAllIf(
    !existsSync(CHROMIUM) && `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM)`,
  );
  let server: Server | undefined;
  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) return;
    server = await Server.create(serverOptions());
    await server.loadModel('identity_delay');
  });
  afterAll(async () => {
    await server?.stop();
  });

  it.each([
    ['tune-ocr-det-2vcpu', 'tune-ocr_det-real-triton-r25.07-2vcpu.json'],
    ['tune-ocr-det-h200', 'tune-ocr_det-real-triton-r25.07-gpu-build-h200.json'],
  ])(
    '%s (a recorded run): the SLA region, the pick labelled, log axes where the values span decades',
    (name, file) => {
      const result = record<TuneResult>(file);
      const svg = tuneChartSvg(result);
      expect(svg).toContain('within the SLA');
      expect(svg).toContain(`pick: ${result.best!.instances} inst`);
      const p99 = result.points.map((p) => p.p99Ms);
      expect(svg.includes('p99 latency (ms, log scale)')).toBe(
        Math.max(...p99, result.slaP99Ms) / Math.min(...p99, result.slaP99Ms) >= 10,
      );
      expectReadable(render(name, svg, true));
    },
  );

  it('tune-no-pick (a run here whose SLA is below one execution): the reason on the chart', async () => {
    const result = await tune(server!, 'identity_delay', {
      slaP99Ms: 5,
      durationMs: 300,
      warmupMs: 100,
      concurrency: [1, 8],
      instances: [1],
      preferredBatchSizes: [2, 4],
      queueDelaysUs: [1000],
    });
    expect(result.best).toBeUndefined();
    const svg = tuneChartSvg(result);
    expect(svg).toContain('No configuration met the SLA');
    expect(svg).toContain('a single request already took');
    expectReadable(render('tune-no-pick', svg, true));
  }, 60_000);
});

interface BenchRecord {
  library: string;
  libraryInfo?: { isFake?: boolean };
  libraryFacts?: Parameters<typeof libraryLabel>[0];
  machine: { cpus: number };
  rounds: number;
  cases: Array<CaseSummary['case'] & Pick<CaseSummary, 'median' | 'rounds' | 'ratios'>>;
}

describe('the bench chart in Chromium', () => {
  skipAllIf(
    !existsSync(CHROMIUM) && `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM)`,
  );

  it.each([
    ['bench-fake-engine-2vcpu', 'fake-engine-2vcpu-chart.json', /fake engine/],
    [
      'bench-real-triton-cpu-2vcpu',
      'real-triton-r25.07-cpu-2vcpu-chart.json',
      /real Triton 2\.\d+\.\d+, CPU/,
    ],
  ])('%s: titled by the library it ran on, labels apart', async (name, file, title) => {
    const r = record<BenchRecord>(file);
    const summaries: CaseSummary[] = r.cases.map(({ median, rounds, ratios, ...c }) => ({
      case: c as CaseSummary['case'],
      median,
      rounds,
      ...(ratios === undefined ? {} : { ratios }),
    }));
    const sides = [...new Set(r.cases.flatMap((c) => Object.keys(c.median)))] as Side[];
    const label = libraryLabel(r.libraryFacts, r.library);
    expect(label).toMatch(title);
    const svg = await renderChart(
      summaries,
      sides,
      `triton-node bench: ${label} (${r.machine.cpus} CPUs, median of ${r.rounds})`,
    );
    expectReadable(render(name, svg));
  });
});
