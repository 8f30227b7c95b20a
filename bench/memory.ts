// `bun run bench/memory.ts`: workspace memory search latency at 1k, 10k and 100k chunks of one
// user (plus a second user's 10% as neighbours), through MemoryService.search exactly as the
// endpoint and the tool call it: query parsing, FTS5/BM25, per-document dedupe, snippets.
// The text is generated deterministically: notes on a dozen everyday and work topics, with
// names, places, numbers and dates, so that words have a realistic spread of frequencies.
// Documents are inserted through the repository in batches. Full-text mode at every size;
// hybrid (vectors from an in-process deterministic 8-dim embedder, so only the database side
// is measured) at the sizes in BENCH_HYBRID (default 1k and 10k: the vector index makes
// inserts slow, not searches).
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { chunkText } from "../src/memory/chunk";
import { MemoryService } from "../src/memory/service";
import { openDatabase, type Database } from "../src/store/db";
import { ensureVectorTable, writeDocuments, type DocumentWrite } from "../src/store/memory";
import { pct } from "./support";

const SIZES = (process.env.BENCH_MEMORY_SIZES ?? "1000,10000,100000").split(",").map(Number);
const HYBRID = new Set((process.env.BENCH_HYBRID ?? "1000,10000").split(",").filter(Boolean).map(Number));
const QUERIES = Number(process.env.BENCH_QUERIES ?? 400);
const USER = "bench-user";
const DIMS = 8;

// ---- deterministic text -------------------------------------------------------------------

function rng(seed: number) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

const TOPICS: Record<string, string> = {
  garden: "tomato tomatoes basil compost seedlings watering greenhouse roses aphids mulch soil harvest zucchini beans pruning trellis frost irrigation slugs fertilizer orchard lettuce peppers cucumbers raspberries strawberries hedge lawn mower rake shovel wheelbarrow seeds bulbs tulips daffodils lavender thyme rosemary weeds potting hose sprinkler",
  cooking: "recipe sourdough starter oven simmer garlic onions risotto broth spices marinade roast dough pastry skillet vinegar lentils curry dumplings noodles butter flour yeast knead braise saute whisk ginger cumin paprika saffron chickpeas tofu salmon chicken lamb brisket pancakes waffles custard meringue",
  travel: "flight itinerary hotel passport luggage train station booking museum ferry hostel visa airport layover reservation sightseeing beach mountains rental map cathedral hiking trail gondola ferryboat timetable currency adapter backpack souvenir checkin boarding gate customs tram metro taxi guidebook",
  finance: "budget invoice taxes mortgage savings pension dividend expenses receipt refund insurance premium interest loan salary accountant spreadsheet portfolio bonds equities inflation deductible payroll ledger audit reconciliation escrow annuity brokerage fees overdraft credit debit transfer statement",
  health: "doctor appointment vitamins sleep running marathon physiotherapy dentist prescription allergy stretching yoga blood pressure cholesterol knee injury recovery cardio protein hydration migraine vaccine checkup ankle shoulder posture meditation calories treadmill cycling swimming orthopedist dermatologist",
  software: "deploy kubernetes database migration latency cache regression pipeline release rollback endpoint schema index replica queue worker timeout benchmark refactor container cluster ingress certificate logging tracing profiler compiler linter dependency webhook scheduler tenant shard throughput",
  family: "birthday anniversary school homework grandparents wedding vacation dinner cousins babysitter playground piano lessons recital graduation gifts holidays daughter son nephew niece aunt uncle reunion picnic bedtime chores allowance carpool daycare kindergarten report",
  reading: "novel chapter author library poetry essay biography translation publisher manuscript review bookshelf paperback anthology fiction memoir footnotes prologue epilogue narrator protagonist trilogy sequel audiobook bookmark critique syllabus reading club",
  home: "renovation plumber leak roof insulation boiler paint carpet furniture kitchen bathroom heating electrician windows tiles gutter ladder drywall faucet thermostat chimney basement attic garage doorbell shelves curtains mattress vacuum dishwasher fridge",
  music: "guitar chords rehearsal concert vinyl playlist drums melody album choir tuning amplifier lyrics tempo orchestra saxophone setlist violin cello harmony metronome scales arpeggio microphone studio mixing mastering encore festival",
  work: "meeting agenda deadline proposal quarterly roadmap stakeholders hiring interview feedback presentation contract client milestone retrospective workshop onboarding offsite budgetary forecast headcount promotion mentoring standup backlog sprint okr compliance procurement vendor",
  pets: "puppy veterinarian leash kibble vaccination grooming litter aquarium hamster training walks kennel adoption parrot treats collar tortoise rabbit microchip fleas deworming harness crate catnip terrier retriever spaniel",
};
const COMMON =
  "the a of to and in for on with at by from as is was are were be been it this that we they i you he she our my their " +
  "will would should could can may might must have has had do did not no more most some any all each every other new old " +
  "so but if then than when while about after before into over again also just very really still only even";
const GENERAL =
  "good great small large long short first last next early late week month year today tomorrow yesterday morning evening " +
  "plan note idea list check call ask send fix start finish keep move try need want like think remember decided agreed " +
  "problem question answer reason result change chance choice cost price time place people friend team group project " +
  "issue detail summary draft version update report review order payment account address email phone message letter " +
  "weekend holiday season spring summer autumn winter weather rain snow sunny cold warm hot cheap expensive quick slow " +
  "easy hard important urgent later soon maybe probably definitely together alone outside inside upstairs downstairs " +
  "bought sold paid booked cancelled postponed moved cleaned repaired tested measured counted compared promised forgot";
const NAMES = "Marta Jonas Aiko Tomasz Priya Lucas Fatima Henrik Chloe Mateo Ingrid Kwame Sofia Ravi Elena Noah Yuki Omar Greta Diego Anouk Bjorn Carmen Dmitri Esme Farid Hana Ivo Julia Kofi".split(" ");
const PLACES = "Lisbon Kyoto Oslo Nairobi Lyon Austin Krakow Porto Tallinn Valencia Hanoi Quebec Bergen Sevilla Leipzig Ghent Bilbao Turku Split Zadar".split(" ");
const topicWords = Object.fromEntries(Object.entries(TOPICS).map(([k, v]) => [k, v.split(" ")])) as Record<string, string[]>;
const commonWords = COMMON.split(" ");
const generalWords = GENERAL.split(" ");
const topicNames = Object.keys(TOPICS);
const stop = new Set(commonWords);

/** The long tail every real notebook has: product names, places, identifiers, jargon. */
const TAIL = (() => {
  const r = rng(99);
  const syl = "ka lo mi ran te vo su der pla gen tor an el is um or bri sta qu ne fa ro li ze".split(" ");
  const out: string[] = [];
  for (let i = 0; i < 30_000; i++) {
    let w = "";
    for (let j = 0, n = 2 + Math.floor(r() * 3); j < n; j++) w += syl[Math.floor(r() * syl.length)];
    out.push(i % 5 === 0 ? `${w.toUpperCase().slice(0, 3)}-${Math.floor(r() * 9000) + 1000}` : w);
  }
  return out;
})();

/** Zipf-like pick: the first words of a list come up far more often than the last. */
const zipf = <T>(r: () => number, xs: T[]) => xs[Math.min(xs.length - 1, Math.floor((xs.length + 1) ** r()) - 1)]!;

function sentence(r: () => number, topic: string): string {
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)]!;
  const words: string[] = [];
  const n = 8 + Math.floor(r() * 10);
  for (let i = 0; i < n; i++) {
    const roll = r();
    if (roll < 0.45) words.push(pick(commonWords));
    else if (roll < 0.7) words.push(zipf(r, topicWords[topic]!));
    else if (roll < 0.84) words.push(zipf(r, generalWords));
    else if (roll < 0.91) words.push(zipf(r, TAIL));
    else if (roll < 0.94) words.push(pick(NAMES));
    else if (roll < 0.96) words.push(pick(PLACES));
    else if (roll < 0.98) words.push(String(Math.floor(r() * 2000)));
    else words.push(zipf(r, topicWords[pick(topicNames)]!)); // a word of another topic
  }
  const s = words.join(" ");
  return s[0]!.toUpperCase() + s.slice(1) + (r() < 0.1 ? "?" : ".");
}

function documentText(r: () => number, topic: string, chars: number): string {
  const paragraphs: string[] = [];
  let total = 0;
  while (total < chars) {
    let p = "";
    const len = 250 + r() * 450;
    while (p.length < len) p += (p ? " " : "") + sentence(r, topic);
    paragraphs.push(p);
    total += p.length + 2;
  }
  return paragraphs.join("\n\n");
}

/**
 * Queries as a person or the agent would type them: words remembered from one sentence of a
 * note, a topic word alone, a name and a topic, a question in full, and one with FTS syntax.
 */
function queries(r: () => number, n: number): string[] {
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)]!;
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const topic = pick(topicNames);
    const tw = () => zipf(r, topicWords[topic]!);
    const remembered = () => {
      const words = sentence(r, topic).replace(/[.?]$/, "").split(" ").filter((w) => !stop.has(w.toLowerCase()));
      const k = Math.min(words.length, 2 + Math.floor(r() * 2));
      const start = Math.floor(r() * Math.max(1, words.length - k));
      return words.slice(start, start + k).join(" ");
    };
    switch (i % 5) {
      case 0: out.push(remembered()); break;
      case 1: out.push(tw()); break;
      case 2: out.push(`${pick(NAMES)} ${tw()}`); break;
      case 3: out.push(`what did ${pick(NAMES)} say about the ${tw()}?`); break;
      default: out.push(`${remembered()} "${tw()}" (${pick(NAMES)}) -`); // with FTS syntax characters
    }
  }
  return out;
}

/** The scripted LLM's embedder, in process: a deterministic unit vector per text. */
function embed(text: string): number[] {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  let x = h >>> 0 || 1;
  const v: number[] = [];
  for (let i = 0; i < DIMS; i++) {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    v.push(x / 0xffffffff - 0.5);
  }
  const norm = Math.hypot(...v) || 1;
  return v.map((c) => c / norm);
}
const embedder = { embeddingModel: "bench-embed", embed: async (texts: string[]) => texts.map(embed) };

// ---- the measurement ----------------------------------------------------------------------

/** Inserts documents of ~4 chunks until the user has `target` chunks; returns the seconds it took. */
async function fill(d: Database, userId: string, target: number, seed: number, vectors: boolean): Promise<number> {
  const r = rng(seed);
  const t0 = performance.now();
  let chunks = 0;
  let n = 0;
  while (chunks < target) {
    const batch: DocumentWrite[] = [];
    while (batch.length < 500 && chunks < target) {
      const topic = topicNames[Math.floor(r() * topicNames.length)]!;
      const content = documentText(r, topic, 2600 + r() * 1000);
      const parts = chunkText(content).slice(0, target - chunks);
      chunks += parts.length;
      const path = `${topic}/${2020 + (n % 6)}-${String(1 + (n % 12)).padStart(2, "0")}/note-${n++}.md`;
      batch.push({ path, content, chunks: parts, vectors: vectors ? { model: embedder.embeddingModel, embeddings: parts.map(embed) } : undefined });
    }
    await writeDocuments(d.db, userId, batch, vectors ? [DIMS] : []);
  }
  return (performance.now() - t0) / 1000;
}

const fmt = (x: number) => (x < 10 ? x.toFixed(2) : x.toFixed(1));

/** CPU time of this process in ms: the database runs in this thread, so it counts too. */
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

async function measure(memory: MemoryService, qs: string[]) {
  for (const q of qs.slice(0, 50)) await memory.search(USER, q, 10); // warm-up
  const times: number[] = [];
  const cpu: number[] = [];
  let hits = 0;
  for (const q of qs) {
    const t = performance.now();
    const c = cpuMs();
    const results = await memory.search(USER, q, 10);
    cpu.push(cpuMs() - c);
    times.push(performance.now() - t);
    if (results.length) hits++;
  }
  return { p50: pct(times, 50), p99: pct(times, 99), cpu50: pct(cpu, 50), hits: hits / qs.length };
}

const tmp = mkdtempSync(join(tmpdir(), "service-bench-memory-"));
const rows: string[] = [];
try {
  const qs = queries(rng(7), QUERIES);
  for (const size of SIZES) {
    for (const mode of ["full-text", "hybrid"] as const) {
      if (mode === "hybrid" && !HYBRID.has(size)) continue;
      const d = await openDatabase(`file:${join(tmp, `${mode}-${size}.db`)}`);
      try {
        if (mode === "hybrid") await ensureVectorTable(d.db, DIMS);
        const insertS = await fill(d, USER, size, size, mode === "hybrid");
        await fill(d, "other-user", Math.ceil(size / 10), size + 1, mode === "hybrid");
        const memory = new MemoryService({ db: d.db, llm: mode === "hybrid" ? embedder : undefined });
        const m = await measure(memory, qs);
        const line = `| ${size.toLocaleString("en")} | ${mode} | ${fmt(m.p50)} ms | ${fmt(m.p99)} ms | ${fmt(m.cpu50)} ms | ${Math.round(m.hits * 100)}% | ${Math.round(size / insertS).toLocaleString("en")} |`;
        rows.push(line);
        console.log(line);
      } finally {
        d.close();
      }
    }
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
console.log(
  [
    "",
    `memory search, ${QUERIES} queries of 1-5 words (10 results, one per document):`,
    `(load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores; CPU: this process's CPU time per search, what it costs without waiting for a core)`,
    "| chunks of the user | search | p50 | p99 | p50 CPU | queries with results | chunks inserted per s |",
    "|---|---|---|---|---|---|---|",
    ...rows,
  ].join("\n"),
);
