/** What every console screen starts with. */
import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";

/** A screen's heading and document title; the heading takes the focus when the screen changes (for screen readers). */
export function Screen({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Affiliate console`;
    if (document.activeElement && document.activeElement !== document.body) heading.current?.focus();
  }, [title]);
  return (
    <>
      <div class="screen-head">
        <h1 ref={heading} tabIndex={-1}>
          {title}
        </h1>
        {actions}
      </div>
      {children}
    </>
  );
}
