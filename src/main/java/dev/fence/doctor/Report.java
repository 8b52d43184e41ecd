package dev.fence.doctor;

import java.util.List;
import java.util.Optional;

/**
 * Every finding of one examination, in the order the checks ran.
 *
 * @param findings the findings
 */
public record Report(List<Finding> findings) {
    public Report {
        findings = List.copyOf(findings);
    }

    /** True when no finding failed. */
    public boolean ok() {
        return findings.stream().noneMatch(f -> f.status() == Status.FAIL);
    }

    /** The warnings and failures, in order. */
    public List<Finding> problems() {
        return findings.stream().filter(f -> f.status() != Status.OK).toList();
    }

    /** The finding of {@code check} with {@code status}, if there is one. */
    public Optional<Finding> find(String check, Status status) {
        return findings.stream()
                .filter(f -> f.check().equals(check) && f.status() == status)
                .findFirst();
    }
}
