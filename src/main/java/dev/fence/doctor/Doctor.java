package dev.fence.doctor;

import dev.fence.core.FenceException;
import java.util.ArrayList;
import java.util.List;

/** Runs checks into one {@link Report}. */
public final class Doctor {
    private Doctor() {}

    /**
     * Runs every check in order. A check that throws a {@link FenceException} (the store down, a bad URL)
     * becomes one failed finding under its name, and the checks after it still run.
     */
    public static Report examine(List<? extends Check> checks) {
        List<Finding> out = new ArrayList<>();
        for (Check check : checks) {
            try {
                out.addAll(check.run());
            } catch (FenceException e) {
                out.add(Finding.fail(
                        check.name(), e.getMessage(), "fix what the message names, then run fence doctor again"));
            }
        }
        return new Report(out);
    }
}
