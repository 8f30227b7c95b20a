import { h } from "./dom";

/**
 * What a screen reader is told of things that happen away from the focus: an answer that
 * starts and is complete, a copy, a deletion. Two visually hidden live regions (polite and
 * assertive) that stay in the page, so that each message is read once.
 */
export class Announcer {
  readonly el: HTMLElement;
  readonly #polite = h("div", { class: "sr-only", role: "status", "aria-live": "polite" });
  readonly #urgent = h("div", { class: "sr-only", role: "alert", "aria-live": "assertive" });

  constructor() {
    this.el = h("div", { class: "announcer" }, this.#polite, this.#urgent);
  }

  /** Says `message` once (the same message twice in a row is said twice). */
  say(message: string, urgent = false): void {
    const region = urgent ? this.#urgent : this.#polite;
    region.textContent = "";
    // a change in a later task is what screen readers notice
    setTimeout(() => (region.textContent = message), 50);
  }
}

export const announcer = new Announcer();
