package dev.fence.cli;

import picocli.CommandLine;

/** Reads the version from the jar manifest (set by the build). */
final class VersionProvider implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
        String v = Main.class.getPackage().getImplementationVersion();
        return new String[] {"fence " + (v == null ? "(development build)" : v), "Java " + Runtime.version()};
    }
}
