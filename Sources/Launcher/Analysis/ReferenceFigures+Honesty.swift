import Foundation

/// What makes a reference figure honest, refused at reading (a topology error naming the file and the key): the
/// published value is the article's, inside its band (a tolerance around it, never around the lab's value); the
/// source names the seed; a figure not reproduced says why; a band that cannot fail is refused.
extension ReferenceFigures {
    /// Actions that can leave an edit unsynced for a day: without one, no user of the topology can.
    static let unsyncingActions: Set<String> = ["offline", "close", "forceQuit", "reinstall", "kill"]

    static func validate(_ figure: ReferenceFigure, _ f: NodeReader, node: JSON5Node) throws(TopologyError) {
        guard figure.band.contains(figure.published) else {
            throw f.fail("the band \(format(figure.band.lowerBound))–\(format(figure.band.upperBound)) does not "
                         + "contain the published \(format(figure.published)): a band is a tolerance around the "
                         + "article's value (a figure the lab cannot reproduce is `reproduced: false` with a reason)",
                         at: node["band"], key: f.child("band"))
        }
        guard figure.source.range(of: #"seed \d{3}"#, options: .regularExpression) != nil else {
            throw f.fail("the source \"\(figure.source)\" names no seed (\"seed 000: …\")", at: node["source"],
                         key: f.child("source"))
        }
        if !figure.reproduced && (figure.reason ?? "").isEmpty {
            throw f.fail("a figure with reproduced: false needs a \"reason\" (why the lab cannot reproduce it)")
        }
    }

    /// The figures together, against the topology's users.
    static func validate(_ figures: [ReferenceFigure], _ r: NodeReader, topology t: Topology,
                         nodes: [JSON5Node]) throws(TopologyError) {
        let actions = Set(t.scenario.map(\.action.name))
        for (figure, node) in zip(figures, nodes) where figure.reproduced {
            if figure.name.hasSuffix(".unsyncedAt24hPercent"), figure.band.contains(0),
               actions.isDisjoint(with: unsyncingActions)
            {
                throw r.fail("the band contains 0 and no user of this topology goes offline, closes the app or loses "
                             + "it with an edit pending: the figure cannot fail (mark it reproduced: false, with the "
                             + "reason)", at: node, key: r.child(figure.name))
            }
            // A design the seed says fails, beside one that works: neither band may hold the other's value.
            let figureName = variantFigure(figure.name)?.figure ?? figure.name
            for other in figures where other.fails != figure.fails && other.reproduced
                && (variantFigure(other.name)?.figure ?? other.name) == figureName
            {
                if figure.band.contains(other.published) {
                    throw r.fail("the band \(format(figure.band.lowerBound))–\(format(figure.band.upperBound)) holds "
                                 + "\(format(other.published)), the published value of \(other.name), a design the "
                                 + "seed says \(other.fails ? "fails" : "works"): it cannot tell the two apart",
                                 at: node, key: r.child(figure.name))
                }
            }
        }
    }
}
