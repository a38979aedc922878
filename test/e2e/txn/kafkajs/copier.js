// The kafkajs read-process-write copier of the transaction tests: every batch of an input
// partition is copied to the output topic in one transaction that also carries the group's
// offsets (transaction().sendOffsets, TxnOffsetCommit v0/v1 without member identity). It runs
// until killed; any error ends it (exit 1) so the test restarts it.
// Usage: node copier.js <broker> <group> <transactional id> <in> <out> <hold ms>
const { Kafka, logLevel } = require('kafkajs')

const [broker, group, txnId, inTopic, outTopic, holdArg] = process.argv.slice(2)
const hold = Number(holdArg || 0)
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

const kafka = new Kafka({ clientId: 'kafkajs-copier', brokers: [broker], logLevel: logLevel.ERROR, retry: { retries: 10 } })
const producer = kafka.producer({ transactionalId: txnId, maxInFlightRequests: 1, idempotent: true, transactionTimeout: 10000 })
const consumer = kafka.consumer({ groupId: group, sessionTimeout: 6000, heartbeatInterval: 1000, rebalanceTimeout: 10000, readUncommitted: false })

const fail = e => {
  console.error('copier:', e)
  process.exit(1)
}

async function main () {
  await producer.connect()
  await consumer.connect()
  await consumer.subscribe({ topics: [inTopic], fromBeginning: true })
  await consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
      if (batch.messages.length === 0) return
      const txn = await producer.transaction()
      const last = batch.messages[batch.messages.length - 1]
      try {
        await txn.send({
          topic: outTopic,
          messages: batch.messages.map(m => ({ key: m.key, value: m.value, partition: batch.partition }))
        })
        await sleep(hold)
        await txn.sendOffsets({
          consumerGroupId: group,
          topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: (BigInt(last.offset) + 1n).toString() }] }]
        })
        await txn.commit()
      } catch (e) {
        try { await txn.abort() } catch (_) {}
        fail(e)
      }
      resolveOffset(last.offset)
      await heartbeat()
    }
  })
}

main().catch(fail)
