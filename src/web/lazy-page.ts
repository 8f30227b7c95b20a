import { fill, h } from "./dom";

/** A page whose module is loaded the first time it is shown: its element stands in until then. */
export function lazyPage(load: () => Promise<{ el: HTMLElement; refresh(): Promise<void> }>): { el: HTMLElement; refresh(): Promise<void> } {
  const el = h("div", { class: "screen-host" }, h("p", { class: "muted", text: "Loading…" }));
  let page: Promise<{ el: HTMLElement; refresh(): Promise<void> }> | undefined;
  return {
    el,
    async refresh() {
      page ??= load().then((p) => (fill(el, p.el), p));
      await (await page).refresh();
    },
  };
}
