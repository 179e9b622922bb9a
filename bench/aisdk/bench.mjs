// The AI SDK's ToolLoopAgent on the turn `cargo bench -p quire-agent`
// measures: a zero-latency scripted model answers nine tool calls, one per
// step, then a final text. 45 tools are defined; prepareStep activates 9
// (3 always-on + the 6 the turn calls) and rewrites the system prompt each
// step, as Quire's runtime does. The tools answer small records without I/O.
//
// Run: npm ci --prefix bench/aisdk && node bench/aisdk/bench.mjs
// (TURNS, default 200 per round, 5 rounds after 20 warm-up turns).

import { ToolLoopAgent, isStepCount, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';

const TURNS = Number(process.env.TURNS ?? 200);
const entities = ['Page', 'Section', 'Image', 'Post', 'NavItem', 'Entry', 'Archive', 'Note', 'Folder', 'Template', 'Collection'];
const verbs = ['get', 'create', 'update', 'delete'];

const tools = {};
const guidance = {};
for (const [name, description] of [
  ['searchTools', 'Find and activate tools by capability keywords.'],
  ['acknowledgeRequest', 'Tell the user in one sentence what you understood.'],
  ['finalAnswer', 'Give the user the final answer; ends the turn.'],
]) {
  tools[name] = tool({
    description,
    inputSchema: z.object({ message: z.string().optional().describe('For the user.'), query: z.string().optional() }),
    execute: async (input) => ({ success: true, ...input }),
  });
  guidance[name] = `${name}: use it as described.`;
}
for (const entity of entities) {
  for (const verb of verbs) {
    const name = `${verb}${entity}`;
    if (Object.keys(tools).length >= 45) break;
    tools[name] = tool({
      description: `${verb} ${entity.toLowerCase()} records by id, slug or all: true. Returns { items }.`,
      inputSchema: z.object({
        id: z.string().optional().describe(`${entity} id.`),
        slug: z.string().optional().describe('URL slug.'),
        name: z.string().optional().describe('Display name.'),
        all: z.boolean().optional().describe('List all.'),
        limit: z.number().int().min(1).max(100).optional().describe('Max items (default 20).'),
        status: z.enum(['draft', 'published', 'unpublished']).optional().describe('Only this status.'),
      }),
      execute: async (input) => ({
        success: true,
        count: 1,
        items: [{ id: input.id ?? 'p1', slug: input.slug ?? 'about', name: input.name ?? 'About', status: 'published', version: 3 }],
      }),
    });
    guidance[name] = `${name}: ${entity}s are identified by id; read before writing.`;
  }
}

const calls = [
  ['acknowledgeRequest', { message: 'You want the About page checked and renamed.' }],
  ['searchTools', { query: 'update page' }],
  ['getPage', { slug: 'about' }],
  ['getTemplate', { slug: 'hero' }],
  ['getPost', { all: true, limit: 5 }],
  ['getNavItem', { all: true }],
  ['getImage', { all: true, limit: 5 }],
  ['updatePage', { id: 'p1', name: 'About us' }],
  ['getPage', { id: 'p1' }],
];
// 3 always-on + the tools the turn calls (the SDK refuses inactive ones): 9.
const active = ['searchTools', 'acknowledgeRequest', 'finalAnswer', 'getPage', 'updatePage', 'getTemplate', 'getPost', 'getNavItem', 'getImage'];
const usage = {
  inputTokens: { total: 100, noCache: 100, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 10, text: 10, reasoning: undefined },
};

let step = 0;
const model = new MockLanguageModelV4({
  doGenerate: async () => {
    const n = step++ % 10;
    if (n === 9) {
      return { content: [{ type: 'text', text: 'The About page is renamed and published.' }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] };
    }
    const [toolName, input] = calls[n];
    return {
      content: [{ type: 'tool-call', toolCallId: `call_${n}`, toolName, input: JSON.stringify(input) }],
      finishReason: { unified: 'tool-calls', raw: undefined },
      usage,
      warnings: [],
    };
  },
});

const agent = new ToolLoopAgent({
  model,
  tools,
  stopWhen: isStepCount(20),
  prepareStep: async ({ stepNumber }) => ({
    activeTools: active,
    system: `You are the site's assistant. Step ${stepNumber}.\n<tool-guidance>\n${active.map((t) => guidance[t]).join('\n')}\n</tool-guidance>`,
  }),
});

async function turn() {
  const start = process.hrtime.bigint();
  const result = await agent.generate({ prompt: 'Rename the About page' });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.steps.length !== 10 || !result.text.includes('renamed')) {
    throw new Error(`unexpected turn: ${result.steps.length} steps, text ${JSON.stringify(result.text)}`);
  }
  return ms;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const p99 = (xs) => [...xs].sort((a, b) => a - b)[Math.round((xs.length - 1) * 0.99)];
for (let i = 0; i < 20; i++) await turn();
const all = [];
for (let round = 1; round <= 5; round++) {
  const perStep = [];
  for (let i = 0; i < TURNS; i++) perStep.push((await turn()) / 10);
  all.push(...perStep);
  console.log(`round ${round}: per step p50 ${median(perStep).toFixed(3)} ms`);
}
console.log(`AI SDK ToolLoopAgent, 10-step turn, per step: p50 ${median(all).toFixed(3)} ms, p99 ${p99(all).toFixed(3)} ms (${all.length} turns)`);
