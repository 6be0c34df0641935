// Which child a resource URI belongs to, read from the children's schemas: one that lists it or has a template
// matching it, else the one whose resources share the longest start with it.
import { UriTemplate } from "@modelcontextprotocol/sdk/shared/uriTemplate.js";
import type { ResourceTemplate } from "@modelcontextprotocol/sdk/types.js";
import type { Child, ChildSchema } from "../../children/child.js";
import type { Owned } from "./proxy-catalog.js";

/** The first child that lists `uri` itself, else the first with a template that matches it. */
export function listedOwner(uri: string, schemas: Owned<ChildSchema>[]): Child | undefined {
  const listed = schemas.find(({ item }) => item.resources.some((resource) => resource.uri === uri));
  if (listed) return listed.child;
  return schemas.find(({ item }) => item.resourceTemplates.some((template) => compiled(template).match(uri) !== null))?.child;
}

/**
 * The child with the resource URI or template (up to its first expression) sharing the longest start with `uri`,
 * at least its whole scheme; the first of equals. Undefined when no child has a resource of that scheme.
 */
export function likeliestOwner(uri: string, schemas: Owned<ChildSchema>[]): Child | undefined {
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:/.exec(uri)?.[0].length;
  if (scheme === undefined) return undefined;
  let best: { child: Child; shared: number } | undefined;
  for (const { child, item } of schemas) {
    const starts = [
      ...item.resources.map((resource) => resource.uri),
      ...item.resourceTemplates.map((template) => template.uriTemplate.split("{")[0]!),
    ];
    for (const start of starts) {
      const shared = sharedStart(uri, start);
      if (shared >= scheme && shared > (best?.shared ?? 0)) best = { child, shared };
    }
  }
  return best?.child;
}

function sharedStart(a: string, b: string): number {
  let at = 0;
  while (at < a.length && at < b.length && a[at] === b[at]) at++;
  return at;
}

/** A template compiled once: the schema cache hands out the same template objects until the list changes. */
const compiledTemplates = new WeakMap<ResourceTemplate, UriTemplate>();
function compiled(template: ResourceTemplate): UriTemplate {
  let uriTemplate = compiledTemplates.get(template);
  if (!uriTemplate) compiledTemplates.set(template, (uriTemplate = new UriTemplate(template.uriTemplate)));
  return uriTemplate;
}
