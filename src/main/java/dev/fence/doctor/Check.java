package dev.fence.doctor;

import java.util.List;

/**
 * One thing {@code fence doctor} examines. A check reports what it finds as findings, failures included;
 * one that throws a {@link dev.fence.core.FenceException} is reported by {@link Doctor#examine} as a single
 * failed finding under its {@link #name()}.
 */
public interface Check {
    /** The check's name, e.g. {@code store}: the finding's when the check throws. */
    String name();

    /** Examines, and reports at least one finding. */
    List<Finding> run();
}
