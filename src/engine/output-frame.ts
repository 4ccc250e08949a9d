import type { SpanJson } from "./json-shapes.js";
import { defineOwn } from "./references.js";

/**
 * One run of a scope (D13): the outputs its blocks can reference (D14), everything visible where it
 * started plus what ran in it, and the spans it records (D17). `own` is what ran in it, handed back to
 * the enclosing scope after a loop iteration or parallel branch.
 */
export class OutputFrame {
  readonly own: Record<string, unknown> = {};
  lastOutput: unknown;

  constructor(
    readonly outputs: Record<string, unknown>,
    /** Appended to the ids of the spans recorded here: `-i<iteration>`, `-b<branch>`, nested in order. */
    readonly suffix: string,
    readonly spans: SpanJson[],
  ) {}

  set(name: string, value: unknown): void {
    defineOwn(this.outputs, name, value);
    defineOwn(this.own, name, value);
    this.lastOutput = value;
  }

  /** A nested run that also sees `context` (`loop`, `parallel`), which it never hands back. */
  child(suffix: string, spans: SpanJson[], context: Record<string, unknown>): OutputFrame {
    return new OutputFrame({ ...this.outputs, ...context }, this.suffix + suffix, spans);
  }

  absorb(child: OutputFrame): void {
    for (const [name, value] of Object.entries(child.own)) {
      defineOwn(this.outputs, name, value);
      defineOwn(this.own, name, value);
    }
  }
}
