/**
 * The small in-memory tree the reader keeps for ONE transaction (or header, or payment-information
 * block) at a time. Values are strings exactly as decoded: no number parsing, entities resolved.
 */
export interface XmlNode {
  name: string;                          // local name, namespace prefix removed
  attributes?: Record<string, string>;
  children?: XmlNode[];
  text: string;
}

export interface Resolved {
  value: string;
  node: XmlNode;  // the element the value came from (for an attribute: its element)
  path: string;   // the path that matched, relative to the node, with sibling indexes where repeated
}

function childNamed(node: XmlNode, name: string): { child: XmlNode; index: number; repeated: boolean } | undefined {
  let found: XmlNode | undefined;
  let repeated = false;
  for (const child of node.children ?? []) {
    if (child.name !== name) continue;
    if (found) { repeated = true; break; }
    found = child;
  }
  return found ? { child: found, index: 1, repeated } : undefined;
}

/**
 * Reads "A/B/C" (first of each) or "A/B/@Ccy". A container (an element with children) has no
 * value of its own, so an alternative path that stops at one does not match.
 */
export function resolvePath(node: XmlNode, path: string): Resolved | undefined {
  const steps = path.split("/");
  let current = node;
  const taken: string[] = [];
  for (const step of steps) {
    if (step.startsWith("@")) {
      const value = current.attributes?.[step.slice(1)];
      if (value === undefined) return undefined;
      taken.push(step);
      return { value, node: current, path: taken.join("/") };
    }
    const next = childNamed(current, step);
    if (!next) return undefined;
    taken.push(next.repeated ? `${step}[${next.index}]` : step);
    current = next.child;
  }
  if (current.children && current.children.length > 0) return undefined;
  return { value: current.text, node: current, path: taken.join("/") };
}
