import { MAX_PATH_BYTES } from "../../src/memory/paths";

// A small, realistic workspace: notes a person keeps, each on its own subject, with some
// words shared between them so that ranking, not mere matching, decides the order.
export const CORPUS: Record<string, string> = {
  "notes/garden.md": `# Garden

The tomatoes in the south bed caught early blight again this year. Remove the lower leaves,
water at the base in the morning, and mulch with straw so that soil does not splash up.

Basil and marigolds next to the tomatoes keep the aphids down. The compost heap needs turning
every two weeks; add dry leaves when it smells.`,
  "notes/sourdough.md": `# Sourdough

Feed the starter twice a day at room temperature: 50 g flour, 50 g water. It is ready when it
doubles in four to six hours and a spoonful floats.

Bake at 250 °C in the Dutch oven, lid on for 20 minutes, then 25 minutes lid off. Let the loaf
cool for an hour before cutting, or the crumb turns gummy.`,
  "travel/kyoto-2026.md": `# Kyoto, April 2026

Flights booked: Lisbon → Frankfurt → Osaka Kansai on 3 April. The hotel near Kyoto station is
paid; the ryokan in Arashiyama still needs confirming by email.

Visit Fushimi Inari early in the morning to avoid crowds. The JR pass is not worth it for
this trip; buy an ICOCA card at the airport instead.`,
  "finance/taxes-2025.md": `# Taxes 2025

The accountant needs the pension statements, the mortgage interest certificate and the
receipts for the home office by 15 March. Donations above 200 euros need a receipt too.

Expected refund: about 1,400 euros. Pay the remaining property tax in two instalments.`,
  "work/incident-2026-03-02.md": `# Incident: checkout latency

From 14:05 to 14:50 the checkout API answered in 4 seconds at p99. A deploy moved the Redis
cache to a new cluster without warming it; every request went to the database.

Fix: roll back, warm the cache before switching, and alert on cache hit rate below 80 %.
Owner: Priya. Follow-up review on Thursday.`,
  "people/marta.md": `# Marta

Marta's birthday is on 12 June. She likes Portuguese tiles, green tea and detective novels.
Last year we gave her a book by Fred Vargas; she loved it.

She is allergic to walnuts. Her daughter Inês starts school in September.`,
  "health/running.md": `# Running

Knee pain after long runs: the physiotherapist suggested strength work for the hips twice a
week and no more than 10 % more distance per week. New shoes after 700 km.

Half marathon on 18 October. Long run on Sundays, intervals on Wednesdays.`,
  "home/renovation.md": `# Kitchen renovation

The plumber comes on Monday to move the sink; the electrician on Wednesday for the oven
circuit. Tiles ordered from the shop in Porto, delivery in three weeks.

Budget: 12,000 euros. Paid so far: 4,500 euros deposit.`,
};

/** Paths that break a rule, with what they break. */
export const BAD_PATHS: [string, unknown][] = [
  ["empty", ""],
  ["absolute", "/etc/passwd"],
  ["absolute, a folder", "/notes/garden.md"],
  ["a drive letter", "C:/notes.md"],
  ["parent segment", "../secret.md"],
  ["parent segment inside", "notes/../../x.md"],
  ["parent segment at the end", "notes/.."],
  ["only ..", ".."],
  ["dot segment", "./notes.md"],
  ["dot segment inside", "notes/./garden.md"],
  ["only .", "."],
  ["double slash", "notes//garden.md"],
  ["trailing slash", "notes/"],
  ["only a slash", "/"],
  ["backslash", "notes\\garden.md"],
  ["backslash parent", "..\\secret.md"],
  ["NUL", "notes/gar\u0000den.md"],
  ["newline", "notes/garden.md\n"],
  ["tab", "notes\tgarden.md"],
  ["escape", "notes/\u001b[31mred.md"],
  ["DEL", "notes/\u007f.md"],
  ["C1 control", "notes/\u0085.md"],
  ["lone surrogate", "notes/\ud800.md"],
  ["too long", "a".repeat(MAX_PATH_BYTES + 1)],
  ["too long in bytes, not characters", "é".repeat(MAX_PATH_BYTES / 2) + "x"],
  ["not a string", 42],
  ["null", null],
];

