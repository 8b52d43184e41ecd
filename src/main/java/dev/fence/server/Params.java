package dev.fence.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.core.InvalidInputException;
import dev.fence.core.Names;
import dev.fence.core.Resources;

/** Named request parameters from a JSON object or a form, read the same way. */
abstract class Params {
    /** The value of {@code name} as text, or null when absent. */
    abstract String text(String name);

    static Params of(JsonNode object) {
        return new Params() {
            @Override
            String text(String name) {
                JsonNode v = object.get(name);
                if (v == null || v.isNull()) {
                    return null;
                }
                if (v.isTextual() || v.isNumber() || v.isBoolean()) {
                    return v.asText();
                }
                throw HttpError.badRequest("'" + name + "' must be a string or a number");
            }
        };
    }

    static Params of(Form form) {
        return new Params() {
            @Override
            String text(String name) {
                return form.get(name);
            }
        };
    }

    /** The value of {@code name}, required. */
    String require(String name) {
        String v = text(name);
        if (v == null || v.isEmpty()) {
            throw new InvalidInputException("'" + name + "' is required");
        }
        return v;
    }

    /** A positive whole number. */
    long token(String name) {
        String v = require(name);
        try {
            long n = Long.parseLong(v);
            if (n > 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new InvalidInputException("'" + name + "' must be a positive whole number; got '" + v + "'");
    }

    /** {@code resource}, or {@code repo} with {@code ref}: the same rule as the CLI's options. */
    String resource() {
        String resource = text("resource");
        String repo = text("repo");
        String ref = text("ref");
        if (resource != null && (repo != null || ref != null)) {
            throw new InvalidInputException("give either resource or repo with ref, not both");
        }
        if (resource != null) {
            return Names.require("resource", resource);
        }
        if (repo == null || ref == null) {
            throw new InvalidInputException("name the resource: resource=NAME, or repo=ID and ref=REF");
        }
        return Resources.forRef(repo, ref);
    }
}
